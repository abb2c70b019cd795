#include "sim/timeline/chrome_trace.h"

namespace placesim {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

struct Track {
  size_t pid;
  size_t tid;
};

}  // namespace

Json chrome_trace(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline) {
  Json events = Json::array();
  const size_t network_pid = cluster.devices().size();
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    const auto& device = cluster.device(id);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", id},
                      {"args", {{"name", device.name.canonical() + " (" + device.spec.name + ")"}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", id}, {"args", {{"sort_index", id}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", id}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", id}, {"tid", 1}, {"args", {{"name", "collectives"}}}});
  }
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", network_pid}, {"args", {{"name", "network"}}}});
  events.push_back(
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", network_pid}, {"args", {{"sort_index", network_pid}}}});
  for (LinkId l = 0; l < cluster.links().size(); ++l) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", network_pid}, {"tid", l},
                      {"args", {{"name", cluster.links()[l].name + " (" + cluster.links()[l].spec.type + ")"}}}});
  }

  // Where each task is drawn: compute on its device, a transfer on the first link of its route.
  std::vector<Track> track(plan.tasks.size());
  for (const Task& task : plan.tasks) {
    const TaskInterval& interval = timeline.tasks[task.id];
    Json args = {{"task", task.id}, {"step", task.step}};
    if (!task.op.empty()) args["op"] = task.op;
    if (task.kind == TaskKind::kCompute) {
      args["flops"] = task.flops;
      args["memory_bytes"] = task.memory_bytes;
      track[task.id] = {task.device, 0};
      events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", task.device},
                        {"tid", 0}, {"ts", interval.start_seconds * kMicrosecondsPerSecond},
                        {"dur", interval.duration() * kMicrosecondsPerSecond}, {"args", args}});
      continue;
    }
    args["bytes"] = task.bytes;
    if (task.kind == TaskKind::kCollective) {
      args["algorithm"] = to_string(task.algorithm);
      args["devices"] = task.group.size();
      track[task.id] = {task.group.front(), 1};
      for (DeviceId member : task.group) {
        events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", member}, {"tid", 1},
                          {"ts", interval.start_seconds * kMicrosecondsPerSecond},
                          {"dur", interval.duration() * kMicrosecondsPerSecond}, {"args", args}});
      }
      continue;
    }
    args["from"] = cluster.device(task.source).name.canonical();
    args["to"] = cluster.device(task.device).name.canonical();
    const auto& route = cluster.route(task.source, task.device);
    track[task.id] = route.empty() ? Track{task.device, 0} : Track{network_pid, route.front().link};
    for (const RouteHop& hop : route) {
      events.push_back({{"name", task.name}, {"cat", to_string(task.phase)}, {"ph", "X"}, {"pid", network_pid},
                        {"tid", hop.link}, {"ts", interval.start_seconds * kMicrosecondsPerSecond},
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
