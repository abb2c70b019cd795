#include "real_backend/cpu/cpu_executor.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <set>

#include "real_backend/cpu/cpu_kernels.h"
#include "real_backend/scheduler.h"
#include "real_backend/worker_thread.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

std::string where(const ExecutionPlan& plan) { return "plan \"" + plan.name + "\""; }

using MinHeap = std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>>;

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
        if (device.node != 0) {
          throw InputError(where(plan), path,
                           "task \"" + task.name + "\" uses " + device.name.canonical() +
                               " on another machine (task:" + std::to_string(device.node) +
                               "); the cpu backend runs single-host plans only");
        }
        if (device.spec.kind != DeviceKind::kCpu) {
          throw InputError(where(plan), path,
                           "task \"" + task.name + "\" uses " + device.name.canonical() + " (a " +
                               to_string(device.spec.kind) + "), which the cpu backend does not have; "
                               "use --backend cuda for GPUs, or place the plan on CPU devices");
        }
      }
      if (task.kind == TaskKind::kCompute) compute_devices.insert(task.device);
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
    successors_ = plan.successors();
    work_.assign(plan.tasks.size(), ComputeWork{});
    empty_.assign(plan.tasks.size(), false);
    owner_.assign(plan.tasks.size(), 0);
    std::map<DeviceId, size_t> device_owner;
    std::map<std::pair<DeviceId, DeviceId>, size_t> channel_owner;
    std::vector<double> channel_bytes;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute) {
        work_[task.id] = compute_work(task, plan.precision, cluster.device(task.device));
        empty_[task.id] = work_[task.id].kind == WorkKind::kNone;
        if (empty_[task.id]) continue;
        auto [it, added] = device_owner.emplace(task.device, owners_.size());
        if (added) owners_.push_back(std::make_unique<Owner>());
        owner_[task.id] = it->second;
      } else {
        empty_[task.id] = !(task.bytes > 0) || task.source == task.device;
        if (empty_[task.id]) continue;
        auto [it, added] = channel_owner.emplace(std::pair{task.source, task.device}, owners_.size());
        if (added) {
          owners_.push_back(std::make_unique<Owner>());
          owners_.back()->is_channel = true;
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
    for (TaskId id = 0; id < n; ++id) unfinished_deps_[id] = plan_->tasks[id].deps.size();
    // The roots first, then make them ready: an empty root finishes at once and may free tasks
    // that a second pass over unfinished_deps_ would see (and start) twice.
    std::vector<TaskId> roots;
    for (TaskId id = 0; id < n; ++id) {
      if (unfinished_deps_[id] == 0) roots.push_back(id);
    }
    origin_ = monotonic_seconds();
    for (TaskId id : roots) make_ready(id);
    all_finished_.wait(lock, [&] { return finished_ == n; });
    timeline_ = nullptr;
    return timeline;
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
      if (--unfinished_deps_[next] == 0) make_ready(next);
    }
    if (finished_ == plan_->tasks.size()) all_finished_.notify_one();
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
      if (owner.is_channel) owner.copies->copy(plan_->tasks[id].bytes);
      else owner.workspace->run(work_[id]);
      double end = now();
      lock.lock();
      timeline_->tasks[id].end_seconds = end;
      finish(id);
    }
  }

  const ExecutionPlan* plan_ = nullptr;
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
