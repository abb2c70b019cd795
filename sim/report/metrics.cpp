#include "sim/report/metrics.h"

#include <algorithm>
#include <map>

namespace placesim {
namespace {

// Tolerance when matching one task's end with another's start (SimGrid's clock is exact to ~1e-9 s).
constexpr double kTouchSeconds = 1e-9;

std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<double, double>> result;
  for (const auto& interval : intervals) {
    if (interval.second <= interval.first) continue;
    if (!result.empty() && interval.first <= result.back().second) {
      result.back().second = std::max(result.back().second, interval.second);
    } else {
      result.push_back(interval);
    }
  }
  return result;
}

double overlap_free_length(const std::vector<std::pair<double, double>>& transfers,
                           const std::vector<std::pair<double, double>>& compute) {
  // Both lists are merged and sorted: measure transfer time not covered by compute.
  double exposed = 0;
  size_t c = 0;
  for (const auto& [start, end] : transfers) {
    double cursor = start;
    while (c < compute.size() && compute[c].second <= cursor) ++c;
    for (size_t k = c; k < compute.size() && compute[k].first < end; ++k) {
      if (compute[k].first > cursor) exposed += compute[k].first - cursor;
      cursor = std::max(cursor, compute[k].second);
    }
    if (cursor < end) exposed += end - cursor;
  }
  return exposed;
}

void peak_memory(const ExecutionPlan& plan, const Timeline& timeline, std::vector<DeviceMetrics>* devices) {
  const std::vector<double> peak = peak_live_bytes(buffer_lifetimes(plan, timeline), devices->size());
  const std::vector<double> workspace = workspace_bytes(plan, devices->size());
  for (size_t d = 0; d < devices->size(); ++d) {
    DeviceMetrics& device = (*devices)[d];
    if (d < plan.static_memory.size()) {
      device.peak_memory.parameter_bytes = plan.static_memory[d].parameter_bytes;
      device.peak_memory.gradient_bytes = plan.static_memory[d].gradient_bytes;
      device.peak_memory.optimizer_state_bytes = plan.static_memory[d].optimizer_state_bytes;
    }
    device.peak_memory.activation_bytes = peak[d];
    device.peak_memory.workspace_bytes = workspace[d];
    device.peak_memory_bytes = device.static_memory_bytes + peak[d] + workspace[d];
  }
}

}  // namespace

const DeviceMetrics* fullest_device(const RunMetrics& metrics) {
  const DeviceMetrics* fullest = nullptr;
  for (const DeviceMetrics& device : metrics.devices) {
    if (!fullest || device.peak_memory_bytes > fullest->peak_memory_bytes) fullest = &device;
  }
  return fullest;
}

double union_length(std::vector<std::pair<double, double>> intervals) {
  double total = 0;
  for (const auto& [start, end] : merged(std::move(intervals))) total += end - start;
  return total;
}

RunMetrics compute_metrics(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline) {
  RunMetrics metrics;
  metrics.tasks = plan.tasks.size();
  metrics.makespan_seconds = timeline.makespan_seconds();
  metrics.step_time_seconds = metrics.makespan_seconds / static_cast<double>(plan.steps);
  if (metrics.step_time_seconds > 0) {
    metrics.samples_per_second = static_cast<double>(plan.samples_per_step) / metrics.step_time_seconds;
  }
  metrics.devices.resize(cluster.devices().size());
  std::vector<std::pair<double, double>> compute, transfers;
  std::vector<std::vector<std::pair<double, double>>> incoming(cluster.devices().size());
  for (const Task& task : plan.tasks) {
    const TaskInterval& interval = timeline.tasks[task.id];
    if (task.kind == TaskKind::kCompute) {
      DeviceMetrics& device = metrics.devices[task.device];
      device.busy_seconds += interval.duration();
      ++device.compute_tasks;
      compute.emplace_back(interval.start_seconds, interval.end_seconds);
    } else if (task.kind == TaskKind::kTransfer) {
      ++metrics.transfers;
      metrics.transferred_bytes += task.bytes;
      transfers.emplace_back(interval.start_seconds, interval.end_seconds);
      incoming[task.device].emplace_back(interval.start_seconds, interval.end_seconds);
    } else {
      ++metrics.collectives;
      metrics.collective_bytes += task.bytes;
      transfers.emplace_back(interval.start_seconds, interval.end_seconds);
      for (DeviceId member : task.group) incoming[member].emplace_back(interval.start_seconds, interval.end_seconds);
    }
  }
  for (DeviceId id = 0; id < metrics.devices.size(); ++id) {
    DeviceMetrics& device = metrics.devices[id];
    device.device = id;
    device.utilization = metrics.makespan_seconds > 0 ? device.busy_seconds / metrics.makespan_seconds : 0;
    device.transfer_in_seconds = union_length(incoming[id]);
    device.static_memory_bytes = id < plan.static_memory.size() ? plan.static_memory[id].total() : 0;
    device.memory_capacity_bytes = cluster.device(id).spec.memory_bytes;
  }
  peak_memory(plan, timeline, &metrics.devices);
  if (plan.symmetry.active()) {  // mirrors repeat their representative's timeline
    for (DeviceId id = 0; id < metrics.devices.size(); ++id) {
      const DeviceId representative = plan.symmetry.representative_of[id];
      if (representative == id) continue;
      DeviceMetrics& device = metrics.devices[id];
      const DeviceMetrics& source = metrics.devices[representative];
      device.busy_seconds = source.busy_seconds;
      device.utilization = source.utilization;
      device.compute_tasks = source.compute_tasks;
      device.transfer_in_seconds = source.transfer_in_seconds;
      device.peak_memory_bytes = source.peak_memory_bytes;
      device.peak_memory = source.peak_memory;
    }
  }
  for (auto& device : metrics.devices) device.out_of_memory = device.peak_memory_bytes > device.memory_capacity_bytes;

  auto compute_merged = merged(compute);
  auto transfers_merged = merged(transfers);
  metrics.compute_seconds = union_length(compute);
  metrics.transfer_seconds = union_length(transfers);
  metrics.exposed_transfer_seconds = overlap_free_length(transfers_merged, compute_merged);
  metrics.communication_share =
      metrics.makespan_seconds > 0 ? metrics.exposed_transfer_seconds / metrics.makespan_seconds : 0;
  if (metrics.collectives > 0) metrics.collective_bandwidth = collective_bandwidth_table(plan, cluster, timeline);

  // Critical path: from the last task to finish, step back to whatever it waited for — the
  // dependency that ended last, or the compute task before it on the same device.
  if (plan.tasks.empty()) return metrics;
  std::map<DeviceId, std::vector<TaskId>> stream;  // compute tasks per device in start order
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCompute && timeline.tasks[task.id].duration() > 0) stream[task.device].push_back(task.id);
  }
  std::vector<TaskId> stream_previous(plan.tasks.size(), plan.tasks.size());
  for (auto& [device, ids] : stream) {
    std::sort(ids.begin(), ids.end(), [&](TaskId a, TaskId b) {
      return timeline.tasks[a].start_seconds < timeline.tasks[b].start_seconds;
    });
    for (size_t i = 1; i < ids.size(); ++i) stream_previous[ids[i]] = ids[i - 1];
  }
  TaskId current = 0;
  for (const Task& task : plan.tasks) {
    const auto& a = timeline.tasks[task.id];
    const auto& b = timeline.tasks[current];
    if (a.end_seconds > b.end_seconds || (a.end_seconds == b.end_seconds && a.duration() > b.duration())) current = task.id;
  }
  std::vector<CriticalPathEntry> path;
  while (true) {
    const TaskInterval& interval = timeline.tasks[current];
    CriticalPathEntry entry{current, interval.start_seconds, interval.end_seconds, ""};
    TaskId next = plan.tasks.size();
    double latest = -1;
    for (TaskId dep : plan.tasks[current].deps) {
      if (timeline.tasks[dep].end_seconds > latest) {
        latest = timeline.tasks[dep].end_seconds;
        next = dep;
      }
    }
    TaskId previous = stream_previous[current];
    if (previous < plan.tasks.size() && timeline.tasks[previous].end_seconds > latest + kTouchSeconds) {
      next = previous;
      entry.waiting_for = "device";
    } else if (next < plan.tasks.size()) {
      entry.waiting_for = "data";
    }
    path.push_back(entry);
    if (next >= plan.tasks.size()) break;
    current = next;
  }
  std::reverse(path.begin(), path.end());
  for (const auto& entry : path) {
    double duration = entry.end_seconds - entry.start_seconds;
    if (plan.tasks[entry.task].kind == TaskKind::kCompute) metrics.critical_path_compute_seconds += duration;
    else metrics.critical_path_transfer_seconds += duration;
  }
  metrics.critical_path = std::move(path);
  return metrics;
}

}  // namespace placesim
