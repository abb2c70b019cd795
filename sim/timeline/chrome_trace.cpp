#include "sim/timeline/chrome_trace.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace placesim {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;
constexpr size_t kComputeTid = 0;
constexpr size_t kFirstCollectiveTid = 1;

struct Track {
  size_t pid;
  size_t tid;
};

/// One slice of a row that may hold overlapping slices: the `index`-th slice of task `task` (the
/// member of its group, the hop of its route).
struct Slice {
  TaskId task;
  size_t index;
};

/// Spreads one row's slices over lanes so that no lane holds two that overlap: in order of start,
/// then task id, each slice takes the lowest-numbered lane free at its start (greedy colouring of
/// an interval graph: as many lanes as the most slices that overlap at one time). Writes each
/// slice's lane to lanes[task][index] and returns the number of lanes.
size_t assign_lanes(std::vector<Slice>& row, const Timeline& timeline, std::vector<std::vector<size_t>>& lanes) {
  std::sort(row.begin(), row.end(), [&](const Slice& a, const Slice& b) {
    const double a_start = timeline.tasks[a.task].start_seconds;
    const double b_start = timeline.tasks[b.task].start_seconds;
    return a_start != b_start ? a_start < b_start : a.task < b.task;
  });
  using BusyLane = std::pair<double, size_t>;  // (end of its last slice, lane)
  std::priority_queue<BusyLane, std::vector<BusyLane>, std::greater<>> busy;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> free;
  size_t count = 0;
  for (const Slice& slice : row) {
    const TaskInterval& interval = timeline.tasks[slice.task];
    while (!busy.empty() && busy.top().first <= interval.start_seconds) {
      free.push(busy.top().second);
      busy.pop();
    }
    size_t lane = count;
    if (free.empty()) {
      ++count;
    } else {
      lane = free.top();
      free.pop();
    }
    lanes[slice.task][slice.index] = lane;
    busy.push({interval.end_seconds, lane});
  }
  return count;
}

}  // namespace

Json chrome_trace(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline) {
  const size_t network_pid = cluster.devices().size();
  const size_t link_count = cluster.links().size();

  // Collectives on a device and transfers on a link can overlap in time; a row shows only nested
  // or disjoint slices, so each device's collectives and each link's transfers get lanes.
  std::vector<std::vector<size_t>> lanes(plan.tasks.size());
  std::vector<std::vector<Slice>> collectives_on(cluster.devices().size());
  std::vector<std::vector<Slice>> transfers_on(link_count);
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCollective) {
      lanes[task.id].resize(task.group.size());
      for (size_t i = 0; i < task.group.size(); ++i) collectives_on[task.group[i]].push_back({task.id, i});
    } else if (task.kind == TaskKind::kTransfer) {
      const auto& route = cluster.route(task.source, task.device);
      lanes[task.id].resize(route.size());
      for (size_t i = 0; i < route.size(); ++i) transfers_on[route[i].link].push_back({task.id, i});
    }
  }
  std::vector<size_t> collective_lanes(cluster.devices().size());
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    collective_lanes[id] = assign_lanes(collectives_on[id], timeline, lanes);
  }
  // Lane 0 of link l is tid l; further lanes follow the links, link by link.
  std::vector<size_t> link_lanes(link_count);
  std::vector<size_t> first_extra_tid(link_count);
  size_t next_extra_tid = link_count;
  for (LinkId l = 0; l < link_count; ++l) {
    link_lanes[l] = assign_lanes(transfers_on[l], timeline, lanes);
    first_extra_tid[l] = next_extra_tid;
    if (link_lanes[l] > 1) next_extra_tid += link_lanes[l] - 1;
  }
  auto link_tid = [&](LinkId link, size_t lane) { return lane == 0 ? link : first_extra_tid[link] + lane - 1; };

  Json events = Json::array();
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    const auto& device = cluster.device(id);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", id},
                      {"args", {{"name", device.name.canonical() + " (" + device.spec.name + ")"}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", id}, {"args", {{"sort_index", id}}}});
    events.push_back(
        {{"name", "thread_name"}, {"ph", "M"}, {"pid", id}, {"tid", kComputeTid}, {"args", {{"name", "compute"}}}});
    for (size_t lane = 0; lane < std::max<size_t>(collective_lanes[id], 1); ++lane) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", id}, {"tid", kFirstCollectiveTid + lane},
                        {"args", {{"name", "collectives " + std::to_string(lane)}}}});
    }
  }
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", network_pid}, {"args", {{"name", "network"}}}});
  events.push_back(
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", network_pid}, {"args", {{"sort_index", network_pid}}}});
  for (LinkId l = 0; l < link_count; ++l) {
    const std::string name = cluster.links()[l].name + " (" + cluster.links()[l].spec.type + ")";
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", network_pid}, {"tid", l}, {"args", {{"name", name}}}});
  }
  for (LinkId l = 0; l < link_count; ++l) {
    const std::string name = cluster.links()[l].name + " (" + cluster.links()[l].spec.type + ")";
    for (size_t lane = 1; lane < link_lanes[l]; ++lane) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", network_pid}, {"tid", link_tid(l, lane)},
                        {"args", {{"name", name + ", lane " + std::to_string(lane)}}}});
    }
  }

  // Where each task is drawn: compute on its device, a collective on its first device's lane, a
  // transfer on the first link of its route.
  std::vector<Track> track(plan.tasks.size());
  for (const Task& task : plan.tasks) {
    const TaskInterval& interval = timeline.tasks[task.id];
    Json args = {{"task", task.id}, {"step", task.step}};
    if (!task.op.empty()) args["op"] = task.op;
    if (task.kind == TaskKind::kCompute) {
      args["flops"] = task.flops;
      args["memory_bytes"] = task.memory_bytes;
      track[task.id] = {task.device, kComputeTid};
      events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", task.device},
                        {"tid", kComputeTid}, {"ts", interval.start_seconds * kMicrosecondsPerSecond},
                        {"dur", interval.duration() * kMicrosecondsPerSecond}, {"args", args}});
      continue;
    }
    args["bytes"] = task.bytes;
    if (task.kind == TaskKind::kCollective) {
      args["algorithm"] = to_string(task.algorithm);
      args["devices"] = task.group.size();
      track[task.id] = {task.group.front(), kFirstCollectiveTid + lanes[task.id].front()};
      for (size_t i = 0; i < task.group.size(); ++i) {
        events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", task.group[i]},
                          {"tid", kFirstCollectiveTid + lanes[task.id][i]},
                          {"ts", interval.start_seconds * kMicrosecondsPerSecond},
                          {"dur", interval.duration() * kMicrosecondsPerSecond}, {"args", args}});
      }
      continue;
    }
    args["from"] = cluster.device(task.source).name.canonical();
    args["to"] = cluster.device(task.device).name.canonical();
    const auto& route = cluster.route(task.source, task.device);
    track[task.id] = route.empty() ? Track{task.device, kComputeTid}
                                   : Track{network_pid, link_tid(route.front().link, lanes[task.id].front())};
    for (size_t i = 0; i < route.size(); ++i) {
      events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", network_pid},
                        {"tid", link_tid(route[i].link, lanes[task.id][i])},
                        {"ts", interval.start_seconds * kMicrosecondsPerSecond},
                        {"dur", interval.duration() * kMicrosecondsPerSecond}, {"args", args}});
    }
  }

  size_t flows = 0;
  for (const Task& task : plan.tasks) {
    for (TaskId dep : task.deps) {
      if (flows >= kMaxTraceFlows) break;
      if (track[dep].pid == track[task.id].pid && track[dep].tid == track[task.id].tid) continue;
      events.push_back({{"name", "dep"}, {"cat", "dependency"}, {"ph", "s"}, {"id", flows}, {"pid", track[dep].pid},
                        {"tid", track[dep].tid}, {"ts", timeline.tasks[dep].end_seconds * kMicrosecondsPerSecond}});
      events.push_back({{"name", "dep"}, {"cat", "dependency"}, {"ph", "f"}, {"bp", "e"}, {"id", flows},
                        {"pid", track[task.id].pid}, {"tid", track[task.id].tid},
                        {"ts", timeline.tasks[task.id].start_seconds * kMicrosecondsPerSecond}});
      ++flows;
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"},
          {"otherData", {{"plan", plan.name}, {"source", timeline.source}}}};
}

}  // namespace placesim
