#include "sim/analytical/analytical_engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "sim/cluster/collective_profile.h"
#include "sim/cost/collective_overlap.h"
#include "sim/cost/cost_model.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/nccl_cost_model.h"
#include "sim/plan/ready_tasks.h"

namespace placesim {

double analytical_transfer_seconds(double bytes, DeviceId from, DeviceId to, const Cluster& cluster) {
  return uncontended_transfer_seconds(bytes, from, to, cluster);
}

double analytical_collective_seconds(const Task& task, const Cluster& cluster, const Transport* transport) {
  if (task.group.size() < 2 || task.bytes <= 0) return 0;
  if (auto seconds = measured_collective_seconds(task.collective, task.group, task.bytes, cluster)) return *seconds;
  return collective_seconds_over(task.collective, task.algorithm, task.group, task.bytes, cluster, transport);
}

namespace {

/// One more than the highest device a compute task of `plan` runs on: what the per-device
/// queues need. The closed form schedules many small parts of a plan on a large cluster, each
/// on a few devices; queues for every device of the cluster cost more than scheduling them.
size_t compute_device_bound(const ExecutionPlan& plan) {
  size_t bound = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCompute) bound = std::max(bound, static_cast<size_t>(task.device) + 1);
  }
  return bound;
}

/// List scheduling in event order: a min-heap of completions; compute tasks queue per device.
class ListScheduler {
 public:
  ListScheduler(const ExecutionPlan& plan, const Cluster& cluster, TaskSeconds* prices, const std::vector<bool>* handled,
                const SuccessorLists* successors)
      : plan_(plan), cluster_(cluster), ready_(plan, compute_device_bound(plan), handled, successors), prices_(prices) {
    if (prices_ && prices_->seconds.size() < plan_.tasks.size()) {
      throw std::logic_error("analytical estimate: prices for " + std::to_string(prices_->seconds.size()) +
                             " tasks, the plan has " + std::to_string(plan_.tasks.size()));
    }
  }

  Timeline run() {
    timeline_.source = "analytical";
    timeline_.tasks.assign(plan_.tasks.size(), TaskInterval{});
    for (TaskId id : ready_.initially_ready()) make_ready(id, 0);
    while (!events_.empty()) {
      auto [now, id] = events_.top();
      events_.pop();
      finish(id, now);
    }
    if (ready_.completed() != ready_.handled_count()) {
      throw std::runtime_error("analytical estimate: " + std::to_string(ready_.handled_count() - ready_.completed()) +
                               " tasks never became ready (a dependency cycle)");
    }
    return std::move(timeline_);
  }

 private:
  void make_ready(TaskId id, double now) {
    const Task& task = plan_.tasks[id];
    if (task.kind == TaskKind::kCompute) {
      ready_.queue_compute(id);
      try_start(task.device, now);
      return;
    }
    const double seconds = priced(id, [&] { return task.kind == TaskKind::kTransfer ? transfer_seconds(task) : collective_seconds(task); });
    if (task.kind == TaskKind::kCollective && seconds > 0) overlap_.start(task);
    start(id, now, seconds);
  }

  const Transport* transport_of(const Task& task) const {
    return task.transport < 0 ? nullptr : &plan_.transports.at(static_cast<size_t>(task.transport));
  }

  void try_start(DeviceId device, double now) {
    while (const std::optional<TaskId> next = ready_.next_compute(device)) {
      const TaskId id = *next;
      double seconds = priced(id, [&] {
        return compute_seconds(plan_.tasks[id], plan_.precision, plan_.memory_format, cluster_.device(device),
                               plan_.lockstep_gemm_factor);
      });
      seconds = overlap_.stretched(device, seconds);
      if (seconds > 0) ready_.set_busy(device, true);  // a task that costs nothing does not hold the device
      start(id, now, seconds);
    }
  }

  /// Task `id`'s time alone: from the caller's prices when there, else `price()` (kept there).
  template <typename Price>
  double priced(TaskId id, Price price) {
    if (!prices_) return price();
    double& seconds = prices_->seconds[id];
    if (std::isnan(seconds)) seconds = price();
    return seconds;
  }

  void start(TaskId id, double now, double seconds) {
    timeline_.tasks[id] = {now, now + seconds};
    events_.emplace(now + seconds, id);
  }

  void finish(TaskId id, double now) {
    const Task& task = plan_.tasks[id];
    if (task.kind == TaskKind::kCompute && timeline_.tasks[id].duration() > 0) ready_.set_busy(task.device, false);
    if (task.kind == TaskKind::kCollective && timeline_.tasks[id].duration() > 0) overlap_.end(task);
    ready_.complete(id, [&](TaskId next) { make_ready(next, now); });
    if (task.kind == TaskKind::kCompute) try_start(task.device, now);
  }

  double transfer_seconds(const Task& task) {
    if (task.source == task.device) return 0;
    auto key = std::make_pair(task.source, task.device);
    auto it = routes_.find(key);
    if (it == routes_.end()) {
      double latency = cluster_.route_latency_seconds(task.source, task.device);
      double bandwidth = cluster_.route_bandwidth_bytes_per_second(task.source, task.device);
      it = routes_.emplace(key, std::make_pair(latency, bandwidth)).first;
    }
    const Transport* transport = transport_of(task);
    if (!transport) return it->second.first + task.bytes / it->second.second;
    double bandwidth = it->second.second;
    if (transport->stream_bytes_per_second > 0) bandwidth = std::min(bandwidth, transport->stream_bytes_per_second);
    return it->second.first + task.bytes / transport->link_efficiency() / bandwidth;
  }

  // Buckets of one plan repeat the same collective, group, algorithm and size: estimate each once.
  double collective_seconds(const Task& task) {
    auto key = std::make_tuple(task.collective, task.algorithm, task.group, task.bytes, task.transport);
    auto it = collectives_.find(key);
    if (it == collectives_.end()) {
      // A measured curve already times what the transport reached; an estimate is stretched.
      const Transport* transport = transport_of(task);
      it = collectives_.emplace(key, analytical_collective_seconds(task, cluster_, transport)).first;
    }
    return it->second;
  }

  const ExecutionPlan& plan_;
  const Cluster& cluster_;
  ReadyTasks ready_;
  TaskSeconds* prices_;  ///< may be null
  Timeline timeline_;
  CollectiveOverlap overlap_{plan_, cluster_};
  // (end time, task id): ties end in id order, deterministically.
  std::priority_queue<std::pair<double, TaskId>, std::vector<std::pair<double, TaskId>>, std::greater<>> events_;
  std::map<std::pair<DeviceId, DeviceId>, std::pair<double, double>> routes_;
  std::map<std::tuple<CollectiveKind, CollectiveAlgorithm, std::vector<DeviceId>, double, int>, double> collectives_;
};

}  // namespace

TaskSeconds::TaskSeconds(size_t tasks) : seconds(tasks, std::numeric_limits<double>::quiet_NaN()) {}

AnalyticalStepEstimate estimate_step(const ExecutionPlan& plan, const Cluster& cluster, TaskSeconds* prices,
                                     const std::vector<bool>* handled, const SuccessorLists* successors) {
  AnalyticalStepEstimate estimate;
  estimate.timeline = ListScheduler(plan, cluster, prices, handled, successors).run();
  estimate.makespan_seconds = estimate.timeline.makespan_seconds();
  estimate.step_seconds = estimate.makespan_seconds / static_cast<double>(std::max<int64_t>(plan.steps, 1));
  return estimate;
}

}  // namespace placesim
