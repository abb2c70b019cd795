#include "real_backend/cpu/cpu_executor.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <cmath>
#include <algorithm>

#include "real_backend/cpu/cpu_kernels.h"
#include "real_backend/hosts/host_group.h"
#include "real_backend/scheduler.h"
#include "real_backend/worker_thread.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

std::string where(const ExecutionPlan& plan) { return "plan \"" + plan.name + "\""; }

using MinHeap = std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>>;

/// What this process does with a task when a plan spans several hosts (one MPI rank per
/// host, rank r = the cluster's node r): runs it, sends or receives a cross-host transfer's
/// bytes, or leaves it to another rank. On one host every task is kLocal.
enum class Role { kLocal, kSend, kReceive, kRemote };

std::vector<Role> task_roles(const ExecutionPlan& plan, const Cluster& cluster, int rank) {
  std::vector<Role> roles(plan.tasks.size(), Role::kRemote);
  for (const Task& task : plan.tasks) {
    const int node = cluster.device(task.device).node;
    if (task.kind != TaskKind::kTransfer) {
      if (node == rank) roles[task.id] = Role::kLocal;
      continue;
    }
    const int source_node = cluster.device(task.source).node;
    if (source_node == node) {
      if (node == rank) roles[task.id] = Role::kLocal;
    } else if (source_node == rank) {
      roles[task.id] = Role::kSend;
    } else if (node == rank) {
      roles[task.id] = Role::kReceive;
    }
  }
  return roles;
}

int host_count(const Cluster& cluster, const ExecutionPlan& plan) {
  int largest = 0;
  for (const Task& task : plan.tasks) {
    largest = std::max(largest, cluster.device(task.device).node);
    if (task.kind == TaskKind::kTransfer) largest = std::max(largest, cluster.device(task.source).node);
  }
  return largest + 1;
}

/// The CPU executor schedules itself: there is no dispatch thread. Each device's worker takes
/// the lowest-id ready task of its device, runs it, and on completion (under one mutex) makes
/// the task's successors ready, waking the worker or copy thread that owns each. A device whose
/// next task is already ready continues at once, without a thread hand-off, which keeps the
/// per-task overhead small and insensitive to the OS scheduler.
class CpuExecutor final : public Executor {
 public:
  using Executor::Executor;
  ~CpuExecutor() override { release(); }

  std::string source() const override { return "measured/cpu"; }

  void check_plan(const ExecutionPlan& plan, const Cluster& cluster) const override {
    const int hosts = host_count(cluster, plan);
    HostGroup* group = hosts > 1 || launched_by_mpirun() ? host_group() : nullptr;
    const int rank = group ? group->rank() : 0;
    if (hosts > 1 && !group) {
      throw InputError(where(plan), "",
                       "the plan spans " + std::to_string(hosts) + " hosts (task:0..task:" + std::to_string(hosts - 1) +
                           "): " + (built_with_mpi() ? "run one process per host, e.g. mpirun -np " + std::to_string(hosts) +
                                                          " placesim execute ..."
                                                    : "this placesim was built without MPI (install libopenmpi-dev and "
                                                      "rebuild)"));
    }
    if (group && group->size() != hosts) {
      throw InputError(where(plan), "",
                       "the plan spans " + std::to_string(hosts) + " host(s) but mpirun started " +
                           std::to_string(group->size()) + " processes: run mpirun -np " + std::to_string(hosts));
    }
    if (group && int64_t(plan.tasks.size()) > int64_t(group->max_tag()) + 1) {
      throw InputError(where(plan), "", "the plan has " + std::to_string(plan.tasks.size()) +
                                            " tasks, more than this MPI's message tags (" +
                                            std::to_string(group->max_tag()) + ")");
    }
    const std::vector<Role> roles = task_roles(plan, cluster, rank);
    for (const Task& task : plan.tasks) {
      if (roles[task.id] == Role::kRemote || roles[task.id] == Role::kReceive) continue;
      for (TaskId dep : task.deps) {
        if (roles[dep] != Role::kRemote) continue;
        throw InputError(where(plan), "/tasks/" + std::to_string(task.id),
                         "task \"" + task.name + "\" on task:" + std::to_string(rank) + " depends on \"" +
                             plan.tasks[dep].name + "\" on another host without a transfer between them; the "
                             "multi-host executor needs every cross-host dependency to be a transfer");
      }
    }
    std::set<DeviceId> compute_devices;
    for (const Task& task : plan.tasks) {
      const std::string path = "/tasks/" + std::to_string(task.id);
      if (task.kind == TaskKind::kCollective) {
        throw InputError(where(plan), path,
                         "task \"" + task.name + "\" is a collective; the cpu backend runs compute tasks and "
                         "point-to-point transfers only");
      }
      std::vector<DeviceId> used = {task.device};
      if (task.kind == TaskKind::kTransfer) used.push_back(task.source);
      for (DeviceId id : used) {
        const ClusterDevice& device = cluster.device(id);
        if (device.spec.kind != DeviceKind::kCpu) {
          throw InputError(where(plan), path,
                           "task \"" + task.name + "\" uses " + device.name.canonical() + " (a " +
                               to_string(device.spec.kind) + "), which the cpu backend does not have; "
                               "use --backend cuda for GPUs, or place the plan on CPU devices");
        }
      }
      if (task.kind == TaskKind::kCompute && roles[task.id] == Role::kLocal) compute_devices.insert(task.device);
    }
    if (compute_devices.size() > usable_cpus()) {
      throw InputError(where(plan), "",
                       "the plan computes on " + std::to_string(compute_devices.size()) +
                           " CPU devices but this machine lets us use " + std::to_string(usable_cpus()) +
                           " cores (one core per device)");
    }
  }

  void prepare(const ExecutionPlan& plan, const Cluster& cluster) override {
    release();
    plan_ = &plan;
    const int hosts = host_count(cluster, plan);
    group_ = hosts > 1 ? host_group() : nullptr;
    role_ = task_roles(plan, cluster, group_ ? group_->rank() : 0);
    handled_ = 0;
    for (Role role : role_) handled_ += role != Role::kRemote;
    successors_ = plan.successors();
    work_.assign(plan.tasks.size(), ComputeWork{});
    empty_.assign(plan.tasks.size(), false);
    owner_.assign(plan.tasks.size(), 0);
    std::map<DeviceId, size_t> device_owner;
    std::map<std::pair<DeviceId, DeviceId>, size_t> channel_owner;
    std::vector<double> channel_bytes;
    for (const Task& task : plan.tasks) {
      if (role_[task.id] == Role::kRemote) continue;
      if (task.kind == TaskKind::kCompute) {
        work_[task.id] = compute_work(task, plan.precision, cluster.device(task.device));
        empty_[task.id] = work_[task.id].kind == WorkKind::kNone;
        if (empty_[task.id]) continue;
        auto [it, added] = device_owner.emplace(task.device, owners_.size());
        if (added) owners_.push_back(std::make_unique<Owner>());
        owner_[task.id] = it->second;
      } else {
        const bool crosses_hosts = role_[task.id] == Role::kSend || role_[task.id] == Role::kReceive;
        // A cross-host transfer always sends a message, even of 0 bytes: it carries the dependency.
        empty_[task.id] = !crosses_hosts && (!(task.bytes > 0) || task.source == task.device);
        if (empty_[task.id]) continue;
        auto [it, added] = channel_owner.emplace(std::pair{task.source, task.device}, owners_.size());
        if (added) {
          owners_.push_back(std::make_unique<Owner>());
          owners_.back()->is_channel = true;
          if (crosses_hosts) {
            const bool sending = role_[task.id] == Role::kSend;
            owners_.back()->peer_rank = cluster.device(sending ? task.device : task.source).node;
            owners_.back()->sends = sending;
          }
        }
        owner_[task.id] = it->second;
        owners_[it->second]->largest_transfer = std::max(owners_[it->second]->largest_transfer, task.bytes);
      }
    }
    const unsigned cpus = usable_cpus();
    unsigned next_cpu = 0;
    for (size_t index = 0; index < owners_.size(); ++index) {
      Owner& owner = *owners_[index];
      std::optional<unsigned> cpu;
      if (!owner.is_channel && options_.pin_threads) cpu = next_cpu++ % cpus;
      owner.thread = std::make_unique<WorkerThread>(cpu);
      // Allocate and touch memory on the thread that will use it.
      owner.thread->run_and_wait([&] {
        if (owner.peer_rank >= 0) {
          owner.message.assign(size_t(std::clamp(owner.largest_transfer, 1.0, double(kMessageBytes))), 1);
          return;
        }
        if (owner.is_channel) {
          owner.copies = std::make_unique<CopyBuffers>(owner.largest_transfer);
          return;
        }
        owner.workspace = std::make_unique<Workspace>();
        for (const Task& task : plan.tasks) {
          if (owner_[task.id] == index && !empty_[task.id] && work_[task.id].kind == WorkKind::kGemm) {
            owner.workspace->reserve(work_[task.id].gemm);
          }
        }
      });
      owner.thread->submit([this, index] { serve(index); });
    }
  }

  Timeline run_once() override {
    const size_t n = plan_->tasks.size();
    Timeline timeline;
    timeline.source = source();
    timeline.tasks.resize(n);
    std::unique_lock<std::mutex> lock(mutex_);
    timeline_ = &timeline;
    finished_ = 0;
    unfinished_deps_.resize(n);
    // Only the deps this process handles count; a received transfer's deps on the sending host
    // are satisfied by the message itself.
    for (TaskId id = 0; id < n; ++id) {
      unfinished_deps_[id] = 0;
      for (TaskId dep : plan_->tasks[id].deps) unfinished_deps_[id] += role_[dep] != Role::kRemote;
    }
    // The roots first, then make them ready: an empty root finishes at once and may free tasks
    // that a second pass over unfinished_deps_ would see (and start) twice.
    std::vector<TaskId> roots;
    for (TaskId id = 0; id < n; ++id) {
      if (role_[id] != Role::kRemote && unfinished_deps_[id] == 0) roots.push_back(id);
    }
    if (group_) {
      // Every host starts the run together; each run's clock starts at the barrier's exit (on
      // several machines the origins differ by the barrier's skew, microseconds on one switch).
      lock.unlock();
      group_->barrier();
      lock.lock();
    }
    origin_ = monotonic_seconds();
    for (TaskId id : roots) make_ready(id);
    all_finished_.wait(lock, [&] { return finished_ == handled_; });
    timeline_ = nullptr;
    lock.unlock();
    if (group_) merge_on_root(timeline);
    return timeline;
  }

  /// Gathers every host's intervals on rank 0: a task's interval comes from the host that ran
  /// it; a cross-host transfer starts when its sender starts sending and ends when its receiver
  /// has the bytes. Other ranks keep their partial timeline (they report nothing).
  void merge_on_root(Timeline& timeline) {
    const size_t n = timeline.tasks.size();
    std::vector<double> mine(2 * n, NAN);
    for (TaskId id = 0; id < n; ++id) {
      if (role_[id] == Role::kLocal || role_[id] == Role::kSend) mine[2 * id] = timeline.tasks[id].start_seconds;
      if (role_[id] == Role::kLocal || role_[id] == Role::kReceive) mine[2 * id + 1] = timeline.tasks[id].end_seconds;
    }
    std::vector<double> all = group_->gather_to_root(mine);
    if (all.empty()) return;
    for (TaskId id = 0; id < n; ++id) {
      for (int rank = 0; rank < group_->size(); ++rank) {
        double start = all[size_t(rank) * 2 * n + 2 * id], end = all[size_t(rank) * 2 * n + 2 * id + 1];
        if (!std::isnan(start)) timeline.tasks[id].start_seconds = start;
        if (!std::isnan(end)) timeline.tasks[id].end_seconds = end;
      }
    }
  }

  void release() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      for (auto& owner : owners_) owner->wake.notify_one();
    }
    owners_.clear();  // joins the threads
    stopping_ = false;
    plan_ = nullptr;
  }

 private:
  /// A thread that runs tasks: a device's compute worker, or the copy thread of a device pair.
  struct Owner {
    bool is_channel = false;
    int peer_rank = -1;  ///< a cross-host channel: the other host's rank
    bool sends = false;  ///< ... and whether this side sends
    std::vector<char> message;  ///< its buffer, reused around for larger transfers
    std::unique_ptr<Workspace> workspace;
    std::unique_ptr<CopyBuffers> copies;
    double largest_transfer = 0;
    std::condition_variable wake;
    MinHeap ready_compute;          // lowest id first
    std::deque<TaskId> ready_copies;  // in the order they became ready
    std::unique_ptr<WorkerThread> thread;  // last: joined before the members it uses are destroyed
  };

  double now() const { return monotonic_seconds() - origin_; }

  /// Under mutex_: a task whose deps have all finished.
  void make_ready(TaskId id) {
    if (empty_[id]) {
      // No work: finishes at once (as the SimGrid engine's zero-cost tasks do).
      double time = now();
      timeline_->tasks[id] = {time, time};
      finish(id);
      return;
    }
    Owner& owner = *owners_[owner_[id]];
    if (owner.is_channel) owner.ready_copies.push_back(id);
    else owner.ready_compute.push(id);
    owner.wake.notify_one();
  }

  /// Under mutex_: a task has ended; its successors may become ready.
  void finish(TaskId id) {
    ++finished_;
    for (TaskId next : successors_[id]) {
      if (role_[next] != Role::kRemote && --unfinished_deps_[next] == 0) make_ready(next);
    }
    if (finished_ == handled_) all_finished_.notify_one();
  }

  /// A cross-host transfer's bytes, as messages of at most the channel's buffer size.
  void exchange(Owner& owner, TaskId id) {
    size_t remaining = size_t(std::max(0.0, plan_->tasks[id].bytes));
    const int tag = int(id);
    do {
      size_t chunk = std::min(remaining, owner.message.size());
      if (owner.sends) group_->send(owner.peer_rank, tag, owner.message.data(), chunk);
      else group_->receive(owner.peer_rank, tag, owner.message.data(), chunk);
      remaining -= chunk;
    } while (remaining > 0);
  }

  void serve(size_t index) {
    Owner& owner = *owners_[index];
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      owner.wake.wait(lock, [&] { return stopping_ || !owner.ready_compute.empty() || !owner.ready_copies.empty(); });
      if (stopping_) return;
      TaskId id;
      if (owner.is_channel) {
        id = owner.ready_copies.front();
        owner.ready_copies.pop_front();
      } else {
        id = owner.ready_compute.top();
        owner.ready_compute.pop();
      }
      timeline_->tasks[id].start_seconds = now();
      lock.unlock();
      if (owner.peer_rank >= 0) exchange(owner, id);
      else if (owner.is_channel) owner.copies->copy(plan_->tasks[id].bytes);
      else owner.workspace->run(work_[id]);
      double end = now();
      lock.lock();
      timeline_->tasks[id].end_seconds = end;
      finish(id);
    }
  }

  static constexpr size_t kMessageBytes = 256u << 20;  // largest buffer of a cross-host channel

  const ExecutionPlan* plan_ = nullptr;
  HostGroup* group_ = nullptr;  // several hosts (MPI), or null
  std::vector<Role> role_;
  size_t handled_ = 0;  // tasks this process runs, sends or receives
  std::vector<std::vector<TaskId>> successors_;
  std::vector<ComputeWork> work_;
  std::vector<bool> empty_;
  std::vector<size_t> owner_;  // task -> index in owners_
  std::vector<std::unique_ptr<Owner>> owners_;

  std::mutex mutex_;  // guards everything below, and the Owners' ready queues
  std::condition_variable all_finished_;
  std::vector<size_t> unfinished_deps_;
  size_t finished_ = 0;
  Timeline* timeline_ = nullptr;
  double origin_ = 0;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(ExecutionOptions options) {
  return std::make_unique<CpuExecutor>(std::move(options));
}

}  // namespace placesim::real
