#include "real_backend/cpu/cpu_executor.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <cmath>
#include <algorithm>

#include "real_backend/runtime/allreduce_chunks.h"
#include "real_backend/cpu/collective_buffers.h"
#include "real_backend/runtime/cpu_kernels.h"
#include "real_backend/hosts/host_group.h"
#include "real_backend/hosts/host_roles.h"
#include "real_backend/runtime/scheduler.h"
#include "real_backend/runtime/worker_thread.h"
#include "sim/core/input_error.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/ready_tasks.h"

namespace placesim::real {
namespace {

std::string where(const ExecutionPlan& plan) { return "plan \"" + plan.name + "\""; }

/// The steps the executor runs for a collective: the simulator's per-round schedule.
std::vector<CollectiveStep> schedule_of(const Task& task, const Cluster& cluster) {
  return collective_schedule(task.collective, task.algorithm, task.group, task.bytes, cluster,
                             CollectiveFidelity::kPerRound);
}

/// MPI message tags: a cross-host transfer's is its task id; each collective step between two
/// hosts takes the next tag after the plan's tasks, in task then step order, so that every rank
/// numbers them alike. Returns, per task, the first tag of its cross-host steps; `used` = tags used.
std::vector<int64_t> first_step_tags(const ExecutionPlan& plan, const std::vector<std::vector<CollectiveStep>>& schedules,
                                     const Cluster& cluster, int64_t* used) {
  std::vector<int64_t> first(plan.tasks.size(), -1);
  int64_t next = int64_t(plan.tasks.size());
  for (const Task& task : plan.tasks) {
    first[task.id] = next;
    for (const CollectiveStep& step : schedules[task.id]) {
      next += cluster.device(step.from).node != cluster.device(step.to).node;
    }
  }
  if (used) *used = next;
  return first;
}

/// The CPU executor schedules itself: there is no dispatch thread. Whichever thread finishes a
/// task reports it, under one mutex, to ReadyTasks (sim/plan/ready_tasks.h, the dispatch rule the
/// engines share), and hands each task that became ready to the thread that runs it: a transfer
/// to its device pair's copy thread, a compute task to its device's worker once ReadyTasks picks
/// it (device idle, lowest ready id). A worker that finishes a task picks its device's next one in
/// the same lock, without a thread hand-off, which keeps the per-task overhead small and
/// insensitive to the OS scheduler. A collective is its schedule's steps, each run by the copy
/// thread of its device pair as the steps' own dependencies allow
/// (real_backend/runtime/allreduce_chunks.h says which elements each step copies or adds).
class CpuExecutor final : public Executor {
 public:
  using Executor::Executor;
  ~CpuExecutor() override { release(); }

  std::string source() const override { return "measured/cpu"; }

  void check_plan(const ExecutionPlan& plan, const Cluster& cluster) const override {
    std::vector<std::vector<CollectiveStep>> schedules(plan.tasks.size());
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCollective) schedules[task.id] = checked_schedule(plan, task, cluster);
    }
    int64_t tags = 0;
    first_step_tags(plan, schedules, cluster, &tags);
    HostGroup* group = checked_host_group(plan, cluster, tags);
    const std::vector<Role> roles = task_roles(plan, cluster, group ? group->rank() : 0);
    std::set<DeviceId> compute_devices;
    for (const Task& task : plan.tasks) {
      const std::string path = "/tasks/" + std::to_string(task.id);
      std::vector<DeviceId> used = {task.device};
      if (task.kind == TaskKind::kTransfer) used.push_back(task.source);
      if (task.kind == TaskKind::kCollective) used.insert(used.end(), task.group.begin(), task.group.end());
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
    const int rank = group_ ? group_->rank() : 0;
    role_ = task_roles(plan, cluster, rank);
    handled_.assign(plan.tasks.size(), false);
    for (TaskId id = 0; id < plan.tasks.size(); ++id) handled_[id] = role_[id] != Role::kRemote;
    ready_.emplace(plan, cluster.devices().size(), &handled_);
    work_.assign(plan.tasks.size(), ComputeWork{});
    empty_.assign(plan.tasks.size(), false);
    owner_.assign(plan.tasks.size(), 0);
    spans_hosts_.assign(plan.tasks.size(), false);
    std::vector<std::vector<CollectiveStep>> schedules(plan.tasks.size());
    for (const Task& task : plan.tasks) {
      if (task.kind != TaskKind::kCollective) continue;
      schedules[task.id] = schedule_of(task, cluster);
      spans_hosts_[task.id] = task_nodes(task, cluster).size() > 1;
    }
    const std::vector<int64_t> first_tag = first_step_tags(plan, schedules, cluster, nullptr);
    Layout layout{cluster, rank, topological_positions(plan), {}, {}};
    std::map<DeviceId, size_t> device_owner;
    for (const Task& task : plan.tasks) {
      if (role_[task.id] == Role::kRemote) continue;
      if (task.kind == TaskKind::kCompute) {
        work_[task.id] = compute_work(task, plan.precision, cluster.device(task.device));
        empty_[task.id] = work_[task.id].kind == WorkKind::kNone;
        if (empty_[task.id]) continue;
        auto [it, added] = device_owner.emplace(task.device, owners_.size());
        if (added) owners_.push_back(std::make_unique<Owner>());
        owner_[task.id] = it->second;
      } else if (task.kind == TaskKind::kTransfer) {
        const bool crosses_hosts = role_[task.id] == Role::kSend || role_[task.id] == Role::kReceive;
        // A cross-host transfer always sends a message, even of 0 bytes: it carries the dependency.
        empty_[task.id] = !crosses_hosts && (!(task.bytes > 0) || task.source == task.device);
        if (empty_[task.id]) continue;
        owner_[task.id] = channel(layout, task.source, task.device, role_[task.id], {task.id, kWholeTask});
        Owner& owner = *owners_[owner_[task.id]];
        owner.largest_transfer = std::max(owner.largest_transfer, task.bytes);
      } else {
        // Like a transfer, a collective over several hosts runs even with 0 bytes: its messages
        // carry the dependencies between the hosts.
        empty_[task.id] = schedules[task.id].empty() || (!(task.bytes > 0) && !spans_hosts_[task.id]);
        if (!empty_[task.id]) prepare_collective(layout, task, std::move(schedules[task.id]), first_tag[task.id]);
      }
    }
    for (auto& owner : owners_) {
      std::sort(owner->order.begin(), owner->order.end());
      for (size_t index = 0; index < owner->order.size(); ++index) owner->sequence_of[owner->order[index].job] = index;
    }
    // One buffer per device up front (enough when its collectives run one at a time, as a
    // data-parallel plan's do): later runs reuse them, so no timed run allocates.
    for (auto [device, elements] : layout.largest_collective) pool_.release(device, pool_.acquire(device, elements));
    const unsigned cpus = usable_cpus();
    unsigned next_cpu = 0;
    for (size_t index = 0; index < owners_.size(); ++index) {
      Owner& owner = *owners_[index];
      std::optional<unsigned> cpu;
      if (!owner.is_channel && options_.pin_threads) cpu = next_cpu++ % cpus;
      owner.thread = std::make_unique<WorkerThread>(cpu);
      // Allocate and touch memory on the thread that will use it.
      owner.thread->run_and_wait([&] {
        owner.scratch.assign(std::max<size_t>(owner.largest_step_elements, 1), 0.0f);
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
          if (task.kind == TaskKind::kCompute && owner_[task.id] == index && !empty_[task.id] &&
              work_[task.id].kind == WorkKind::kGemm) {
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
    for (auto& owner : owners_) owner->cursor = 0;
    // Only the deps this process handles count (handled_); a received transfer's deps on the
    // sending host are satisfied by the message itself.
    ready_->restart();
    // The roots first, then make them ready: an empty root finishes at once and may free tasks
    // that a second look at the roots would see (and start) twice.
    const std::vector<TaskId> roots = ready_->initially_ready();
    if (group_) {
      // Every host starts the run together; each run's clock starts at the barrier's exit (on
      // several machines the origins differ by the barrier's skew, microseconds on one switch).
      lock.unlock();
      group_->barrier();
      lock.lock();
    }
    origin_ = monotonic_seconds();
    for (TaskId id : roots) make_ready(id);
    all_finished_.wait(lock, [&] { return ready_->completed() == ready_->handled_count(); });
    timeline_ = nullptr;
    lock.unlock();
    if (group_) merge_on_root(timeline, role_, spans_hosts_, *group_);
    return timeline;
  }

  void release() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      for (auto& owner : owners_) owner->wake.notify_one();
    }
    owners_.clear();  // joins the threads
    ready_.reset();
    collectives_.clear();
    pool_.clear();
    stopping_ = false;
    plan_ = nullptr;
  }

 private:
  static constexpr size_t kWholeTask = size_t(-1);

  /// What a copy thread runs: a transfer (step = kWholeTask) or one step of a collective.
  struct Job {
    TaskId task = 0;
    size_t step = kWholeTask;
    auto operator<=>(const Job&) const = default;
  };

  /// A cross-host channel's job, sorted by (topological position of its task, step).
  struct OrderedJob {
    size_t position = 0, step = 0;
    Job job;
    auto operator<=>(const OrderedJob&) const = default;
  };

  /// A thread that runs tasks: a device's compute worker, or the copy thread of a device pair.
  struct Owner {
    bool is_channel = false;
    int peer_rank = -1;  ///< a cross-host channel: the other host's rank
    bool sends = false;  ///< ... and whether this side sends
    std::vector<char> message;  ///< its buffer, reused around for larger transfers
    std::unique_ptr<Workspace> workspace;
    std::unique_ptr<CopyBuffers> copies;
    std::vector<float> scratch;  ///< a received collective chunk, before it is added
    double largest_transfer = 0;
    size_t largest_step_elements = 0;
    std::condition_variable wake;
    std::optional<TaskId> assigned;  ///< a compute worker: the task ReadyTasks picked for it
    std::deque<Job> ready_copies;    // a copy thread: in the order they became ready
    // A cross-host channel runs its jobs in `order` only: the ready ones wait in `ready_in_order`
    // (indices into `order`) until the cursor reaches them.
    std::vector<OrderedJob> order;
    std::map<Job, size_t> sequence_of;
    std::set<size_t> ready_in_order;
    size_t cursor = 0;
    std::unique_ptr<WorkerThread> thread;  // last: joined before the members it uses are destroyed

    bool ordered() const { return peer_rank >= 0; }
    /// A copy thread's job that became ready.
    void push(Job job) {
      if (ordered()) ready_in_order.insert(sequence_of.at(job));
      else ready_copies.push_back(job);
    }
    bool has_next() const {
      if (!is_channel) return assigned.has_value();
      if (ordered()) return !ready_in_order.empty() && *ready_in_order.begin() == cursor;
      return !ready_copies.empty();
    }
    Job take_next() {
      if (!is_channel) {
        Job job{*assigned, kWholeTask};
        assigned.reset();
        return job;
      }
      if (ordered()) {
        ready_in_order.erase(ready_in_order.begin());
        return order[cursor++].job;
      }
      Job job = ready_copies.front();
      ready_copies.pop_front();
      return job;
    }
  };

  /// A collective this process takes part in: its schedule, the data each step carries, who runs
  /// each step, and (under mutex_) one run's progress.
  struct Collective {
    std::vector<CollectiveStep> steps;
    std::vector<AllreduceChunk> chunks;
    size_t elements = 0;         ///< per member: the input (and, but for an all-to-all, the result)
    size_t buffer_elements = 0;  ///< per member's buffer: an all-to-all's receives after its input
    std::vector<bool> local_member;  ///< per member of task.group: on this host
    std::vector<Role> roles;         ///< per step
    std::vector<size_t> owner;       ///< per step this process runs: index in owners_
    std::vector<int> tag;            ///< per cross-host step: its MPI tag
    std::vector<size_t> from_member, to_member;  ///< per step: indices in task.group
    std::vector<std::vector<size_t>> successors;
    std::vector<size_t> initial_pending;  ///< per step: its deps this process runs (0 for received steps)
    size_t handled = 0;                   ///< steps this process runs, sends or receives
    // One run's progress.
    std::vector<size_t> pending;
    size_t remaining = 0;
    double last_end_seconds = 0;
    std::vector<CollectiveBuffer*> buffers;  ///< per member; null for members on other hosts
  };

  /// A plan's collective task, with the reason (an InputError naming the task) when this
  /// executor cannot run it.
  static std::vector<CollectiveStep> checked_schedule(const ExecutionPlan& plan, const Task& task,
                                                      const Cluster& cluster) {
    const std::string path = "/tasks/" + std::to_string(task.id);
    auto reject = [&](const std::string& why) {
      throw InputError(where(plan), path, "collective \"" + task.name + "\": " + why);
    };
    if (task.group.empty()) reject("its group has no devices");
    std::set<DeviceId> distinct(task.group.begin(), task.group.end());
    if (distinct.size() != task.group.size()) reject("a device appears twice in its group");
    std::string why;
    if (!collective_supported(task.collective, task.algorithm, &why)) reject(why);
    if (!applicable(task.algorithm, task.group, cluster, &why)) reject(why);
    return schedule_of(task, cluster);
  }

  /// What prepare() builds the owners and collectives from.
  struct Layout {
    const Cluster& cluster;
    int rank = 0;
    std::vector<size_t> position;  ///< per task: its place in a topological order of the plan
    std::map<std::pair<DeviceId, DeviceId>, size_t> channel_owner;  ///< device pair -> index in owners_
    std::map<DeviceId, size_t> largest_collective;  ///< per device here: its largest collective, elements
  };

  /// The copy thread of a device pair (created on first use), which will run `job`; returns its
  /// index in owners_. A cross-host pair's thread runs its jobs in one fixed order (topological
  /// position of the task, then step), the same on both hosts, so that neither end ever waits in
  /// MPI for a message the other sends only later.
  size_t channel(Layout& layout, DeviceId from, DeviceId to, Role role, Job job) {
    auto [it, added] = layout.channel_owner.emplace(std::pair{from, to}, owners_.size());
    if (added) {
      owners_.push_back(std::make_unique<Owner>());
      owners_.back()->is_channel = true;
      if (role == Role::kSend || role == Role::kReceive) {
        owners_.back()->peer_rank = layout.cluster.device(role == Role::kSend ? to : from).node;
        owners_.back()->sends = role == Role::kSend;
      }
    }
    Owner& owner = *owners_[it->second];
    if (owner.ordered()) owner.order.push_back({layout.position[job.task], job.step == kWholeTask ? 0 : job.step, job});
    return it->second;
  }

  /// Records a collective this process takes part in: the data its steps carry, which of them
  /// run here and on which copy thread, and their MPI tags (from `first_tag`, for steps between hosts).
  void prepare_collective(Layout& layout, const Task& task, std::vector<CollectiveStep> steps, int64_t first_tag) {
    Collective& collective = collectives_[task.id];
    collective.elements = collective_elements(task.collective, task.group, task.bytes);
    collective.buffer_elements = collective_buffer_elements(task.collective, collective.elements);
    collective.chunks =
        collective_chunks(task.collective, task.algorithm, task.group, layout.cluster, steps, collective.elements);
    collective.steps = std::move(steps);
    const size_t count = collective.steps.size();
    collective.local_member.assign(task.group.size(), false);
    for (size_t member = 0; member < task.group.size(); ++member) {
      collective.local_member[member] = layout.cluster.device(task.group[member]).node == layout.rank;
      if (!collective.local_member[member]) continue;
      size_t& largest = layout.largest_collective[task.group[member]];
      largest = std::max({largest, collective.buffer_elements, size_t{1}});
    }
    auto member_of = [&](DeviceId device) {
      return size_t(std::find(task.group.begin(), task.group.end(), device) - task.group.begin());
    };
    collective.roles.resize(count);
    collective.owner.assign(count, 0);
    collective.tag.assign(count, -1);
    collective.from_member.resize(count);
    collective.to_member.resize(count);
    collective.successors.assign(count, {});
    collective.initial_pending.assign(count, 0);
    collective.pending.resize(count);
    int64_t tag = first_tag;
    for (size_t s = 0; s < count; ++s) {
      const CollectiveStep& step = collective.steps[s];
      const int from_node = layout.cluster.device(step.from).node, to_node = layout.cluster.device(step.to).node;
      if (from_node != to_node) collective.tag[s] = int(tag++);
      const Role role = collective.roles[s] = transfer_role(from_node, to_node, layout.rank);
      collective.from_member[s] = member_of(step.from);
      collective.to_member[s] = member_of(step.to);
      for (size_t dep : step.deps) collective.successors[dep].push_back(s);
      if (role == Role::kRemote) continue;
      ++collective.handled;
      // A received step's deps are on the sending host: the message itself waits for them.
      if (role != Role::kReceive) {
        for (size_t dep : step.deps) collective.initial_pending[s] += collective.roles[dep] != Role::kRemote;
      }
      collective.owner[s] = channel(layout, step.from, step.to, role, {task.id, s});
      size_t& scratch = owners_[collective.owner[s]]->largest_step_elements;
      if (role != Role::kSend) scratch = std::max(scratch, collective.chunks[s].count);
    }
  }

  double now() const { return monotonic_seconds() - origin_; }

  /// Under mutex_: a task whose deps have all finished. A compute task waits for its device.
  void make_ready(TaskId id) {
    const Task& task = plan_->tasks[id];
    if (task.kind == TaskKind::kCompute) {
      ready_->queue_compute(id);
      dispatch_compute(task.device);
      return;
    }
    if (empty_[id]) {
      finish_at_once(id);
      return;
    }
    if (task.kind == TaskKind::kCollective) {
      start_collective(id);
      return;
    }
    Owner& owner = *owners_[owner_[id]];
    owner.push({id, kWholeTask});
    owner.wake.notify_one();
  }

  /// Under mutex_: while `device` is idle, hands the compute task ReadyTasks picks (the lowest
  /// ready id) to the device's worker. A task without work finishes at once and leaves the
  /// device idle, as the SimGrid engine's zero-cost tasks do.
  void dispatch_compute(DeviceId device) {
    while (const std::optional<TaskId> next = ready_->next_compute(device)) {
      if (empty_[*next]) {
        finish_at_once(*next);
        continue;
      }
      ready_->set_busy(device, true);
      Owner& worker = *owners_[owner_[*next]];
      worker.assigned = *next;
      worker.wake.notify_one();
    }
  }

  /// Under mutex_: a task without work (no FLOPs, no bytes) ends when it starts.
  void finish_at_once(TaskId id) {
    const double time = now();
    timeline_->tasks[id] = {time, time};
    finish(id);
  }

  /// Under mutex_: a task has ended; its successors may become ready.
  void finish(TaskId id) {
    ready_->complete(id, [this](TaskId next) { make_ready(next); });
    if (ready_->completed() == ready_->handled_count()) all_finished_.notify_one();
  }

  /// Under mutex_: takes a buffer for each member on this host and hands out the steps that wait
  /// for nothing.
  void start_collective(TaskId id) {
    Collective& collective = collectives_.at(id);
    const Task& task = plan_->tasks[id];
    const double start = now();
    timeline_->tasks[id].start_seconds = start;
    collective.last_end_seconds = start;
    collective.buffers.assign(task.group.size(), nullptr);
    for (size_t member = 0; member < task.group.size(); ++member) {
      if (!collective.local_member[member]) continue;
      CollectiveBuffer* buffer = pool_.acquire(task.group[member], std::max<size_t>(collective.buffer_elements, 1));
      collective.buffers[member] = buffer;
      if (options_.before_collective) {
        options_.before_collective(task, member, buffer->values.data(), collective.elements);
      }
      if (task.collective == CollectiveKind::kAllToAll) {
        // The member's own part stays with it: copied to its received parts, as NCCL's
        // all-to-all copies it locally (no schedule step carries it).
        const size_t part = collective.elements / task.group.size();
        float* values = buffer->values.data();
        std::memcpy(values + collective.elements + member * part, values + member * part, part * sizeof(float));
      }
    }
    collective.pending = collective.initial_pending;
    collective.remaining = collective.handled;
    if (collective.remaining == 0) {
      end_collective(id, collective);
      return;
    }
    for (size_t s = 0; s < collective.steps.size(); ++s) {
      if (collective.roles[s] != Role::kRemote && collective.pending[s] == 0) push_step(id, collective, s);
    }
  }

  void push_step(TaskId id, const Collective& collective, size_t step) {
    Owner& owner = *owners_[collective.owner[step]];
    owner.push({id, step});
    owner.wake.notify_one();
  }

  /// Under mutex_: a step has ended; the steps waiting for it may start; the collective ends
  /// with its last step.
  void finish_step(TaskId id, Collective& collective, size_t step, double end_seconds) {
    collective.last_end_seconds = std::max(collective.last_end_seconds, end_seconds);
    for (size_t next : collective.successors[step]) {
      const Role role = collective.roles[next];
      if (role == Role::kRemote || role == Role::kReceive) continue;
      if (--collective.pending[next] == 0) push_step(id, collective, next);
    }
    if (--collective.remaining == 0) end_collective(id, collective);
  }

  void end_collective(TaskId id, Collective& collective) {
    const Task& task = plan_->tasks[id];
    timeline_->tasks[id].end_seconds = collective.last_end_seconds;
    for (size_t member = 0; member < task.group.size(); ++member) {
      CollectiveBuffer* buffer = collective.buffers[member];
      if (!buffer) continue;
      if (options_.after_collective) {
        const size_t result = collective.buffer_elements - collective.elements;  // an all-to-all's receives
        options_.after_collective(task, member, buffer->values.data() + result, collective.elements);
      }
      pool_.release(task.group[member], buffer);
    }
    collective.buffers.clear();
    finish(id);
  }

  /// One step's real work: the chunk's bytes from the sender's buffer to the receiver's (a
  /// memcpy, or an MPI message between hosts), then for a reduce step the elementwise add of the
  /// received chunk into the receiver's buffer.
  void run_step(Owner& owner, const Collective& collective, size_t step) {
    const AllreduceChunk& chunk = collective.chunks[step];
    const size_t bytes = chunk.count * sizeof(float);
    CollectiveBuffer* from = collective.buffers[collective.from_member[step]];
    CollectiveBuffer* into = collective.buffers[collective.to_member[step]];
    const Role role = collective.roles[step];
    if (role == Role::kSend) {
      group_->send(owner.peer_rank, collective.tag[step], from->values.data() + chunk.offset, bytes);
      return;
    }
    float* target = into->values.data() + chunk.destination();
    float* received = chunk.reduces ? owner.scratch.data() : target;
    if (role == Role::kReceive) group_->receive(owner.peer_rank, collective.tag[step], received, bytes);
    else std::memcpy(received, from->values.data() + chunk.offset, bytes);
    if (!chunk.reduces) return;
    std::lock_guard<std::mutex> lock(into->reduce);
    add_into(target, received, chunk.count);
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
      owner.wake.wait(lock, [&] { return stopping_ || owner.has_next(); });
      if (stopping_) return;
      const Job job = owner.take_next();
      if (job.step != kWholeTask) {
        Collective& collective = collectives_.at(job.task);
        lock.unlock();
        run_step(owner, collective, job.step);
        double end = now();
        lock.lock();
        finish_step(job.task, collective, job.step, end);
        continue;
      }
      const TaskId id = job.task;
      timeline_->tasks[id].start_seconds = now();
      lock.unlock();
      if (owner.peer_rank >= 0) exchange(owner, id);
      else if (owner.is_channel) owner.copies->copy(plan_->tasks[id].bytes);
      else owner.workspace->run(work_[id]);
      double end = now();
      lock.lock();
      timeline_->tasks[id].end_seconds = end;
      if (owner.is_channel) {
        finish(id);
        continue;
      }
      // The device is idle again: a successor that became ready competes with the tasks already
      // waiting for the device, and the lowest id of them runs next (on this thread, at once).
      const DeviceId device = plan_->tasks[id].device;
      ready_->set_busy(device, false);
      finish(id);
      dispatch_compute(device);
    }
  }

  static constexpr size_t kMessageBytes = 256u << 20;  // largest buffer of a cross-host channel

  const ExecutionPlan* plan_ = nullptr;
  HostGroup* group_ = nullptr;  // several hosts (MPI), or null
  std::vector<Role> role_;
  std::vector<bool> handled_;  // per task: this process runs, sends, receives or takes part in it
  std::vector<ComputeWork> work_;
  std::vector<bool> empty_;
  std::vector<bool> spans_hosts_;  // collectives whose group is on several hosts
  std::vector<size_t> owner_;  // task -> index in owners_
  std::vector<std::unique_ptr<Owner>> owners_;
  std::unordered_map<TaskId, Collective> collectives_;  // filled by prepare; runs change only their progress

  std::mutex mutex_;  // guards everything below, the Owners' ready jobs and the collectives' progress
  std::optional<ReadyTasks> ready_;  // one run's progress: the dispatch rule (made by prepare)
  CollectiveBufferPool pool_;
  std::condition_variable all_finished_;
  Timeline* timeline_ = nullptr;
  double origin_ = 0;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<Executor> make_cpu_executor(ExecutionOptions options) {
  return std::make_unique<CpuExecutor>(std::move(options));
}

}  // namespace placesim::real
