#include "sim/report/bottleneck.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "sim/plan/collective_schedule.h"

namespace placesim {
namespace {

/// The machine prefix of a vertex name ("task:3/" of "task:3/CPU:0"), "" for fabric vertices.
std::string machine_of(const std::string& vertex) {
  if (vertex.rfind("task:", 0) != 0) return "";
  const size_t slash = vertex.find('/');
  return slash == std::string::npos ? vertex : vertex.substr(0, slash + 1);
}

}  // namespace

Bottleneck find_bottleneck(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline,
                           const RunMetrics& metrics, const std::vector<DeviceId>& workers,
                           const std::vector<DeviceId>& parameter_servers) {
  Bottleneck bottleneck;
  const double makespan = timeline.makespan_seconds();
  if (makespan <= 0) return bottleneck;
  auto busiest_device = [&](const char* kind, const std::vector<DeviceId>& devices) {
    ResourceLoad load{kind, "", -1};
    for (DeviceId device : devices) {
      const double share = metrics.devices.at(device).busy_seconds / makespan;
      if (share > load.busy_share) load = {kind, cluster.vertices()[cluster.device(device).vertex].name, share};
    }
    if (load.busy_share >= 0) bottleneck.loads.push_back(load);
  };
  busiest_device("compute", workers);
  busiest_device("PS CPU", parameter_servers);

  // Bytes each link direction carried: transfers along their routes, collectives along their
  // schedules' hops (payload over the transport's link efficiency). Each device pair is routed
  // once and each distinct collective (the same buckets every step) scheduled once.
  auto wire_bytes = [&](const Task& task, double bytes) {
    return task.transport < 0 ? bytes : bytes / plan.transports.at(static_cast<size_t>(task.transport)).link_efficiency();
  };
  std::map<std::pair<DeviceId, DeviceId>, double> pair_bytes;
  std::map<std::tuple<CollectiveKind, CollectiveAlgorithm, std::vector<DeviceId>, double>, double> collective_wire_bytes;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kTransfer && task.source != task.device && task.bytes > 0) {
      pair_bytes[{task.source, task.device}] += wire_bytes(task, task.bytes);
    }
    if (task.kind == TaskKind::kCollective && task.group.size() > 1 && task.bytes > 0) {
      collective_wire_bytes[{task.collective, task.algorithm, task.group, task.bytes}] +=
          wire_bytes(task, task.bytes) / task.bytes;
    }
  }
  for (const auto& [key, scale] : collective_wire_bytes) {
    const auto& [kind, algorithm, group, bytes] = key;
    for (const CollectiveStep& step :
         collective_schedule(kind, algorithm, group, bytes, cluster, CollectiveFidelity::kPerPhase)) {
      if (step.from != step.to) pair_bytes[{step.from, step.to}] += step.bytes * scale;
    }
  }
  std::map<std::pair<LinkId, bool>, double> carried;
  for (const auto& [pair, bytes] : pair_bytes) {
    for (const RouteHop& hop : cluster.route(pair.first, pair.second)) carried[{hop.link, hop.a_to_b}] += bytes;
  }
  std::vector<std::string> server_machines;
  for (DeviceId server : parameter_servers) {
    server_machines.push_back(machine_of(cluster.vertices()[cluster.device(server).vertex].name));
  }
  ResourceLoad nic{"PS NIC", "", -1}, network{"network", "", -1};
  for (const auto& [key, bytes] : carried) {
    const ClusterLink& link = cluster.links()[key.first];
    const double share = bytes / (link.spec.bandwidth_bytes_per_second * makespan);
    const std::string a = machine_of(cluster.vertices()[link.a].name), b = machine_of(cluster.vertices()[link.b].name);
    // A server machine's NIC link: one end inside that machine, the other outside it.
    const bool server_nic = a != b && std::any_of(server_machines.begin(), server_machines.end(), [&](const std::string& m) {
                              return !m.empty() && (a == m || b == m);
                            });
    ResourceLoad& load = server_nic ? nic : network;
    const std::string& from = cluster.vertices()[key.second ? link.a : link.b].name;
    const std::string& to = cluster.vertices()[key.second ? link.b : link.a].name;
    if (share > load.busy_share) load = {load.kind, from + " -> " + to, share};
  }
  for (const ResourceLoad& load : {nic, network}) {
    if (load.busy_share >= 0) bottleneck.loads.push_back(load);
  }
  std::stable_sort(bottleneck.loads.begin(), bottleneck.loads.end(),
                   [](const ResourceLoad& x, const ResourceLoad& y) { return x.busy_share > y.busy_share; });
  return bottleneck;
}

std::string bottleneck_text(const Bottleneck& bottleneck) {
  const ResourceLoad* busiest = bottleneck.busiest();
  if (!busiest) return "bottleneck: none (nothing ran)";
  char line[512];
  std::snprintf(line, sizeof(line), "bottleneck: %s, %s (%.0f%% busy)", busiest->kind.c_str(), busiest->resource.c_str(),
                100 * busiest->busy_share);
  std::string text = line;
  for (size_t i = 1; i < bottleneck.loads.size(); ++i) {
    std::snprintf(line, sizeof(line), "%s %s %.0f%%", i == 1 ? ";" : ",", bottleneck.loads[i].kind.c_str(),
                  100 * bottleneck.loads[i].busy_share);
    text += line;
  }
  return text;
}

}  // namespace placesim
