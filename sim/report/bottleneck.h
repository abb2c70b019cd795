// Bottleneck: which resource limits a data-parallel run — the workers' compute, a parameter
// server's CPU (deserialising, summing, applying), a parameter server machine's network link
// (its NIC), or another link of the network — from each resource's busy share of the run:
// compute and CPUs by their busy time, links by the bytes they carried over what they could
// carry (bandwidth x makespan), each direction on its own.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/metrics.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct ResourceLoad {
  std::string kind;      ///< "compute", "PS CPU", "PS NIC", "network"
  std::string resource;  ///< the busiest device or link of the kind, e.g. "task:0/CPU:0"
  double busy_share = 0; ///< of the run's makespan, 0..1
};

struct Bottleneck {
  std::vector<ResourceLoad> loads;  ///< one per kind present, busiest first
  const ResourceLoad* busiest() const { return loads.empty() ? nullptr : &loads.front(); }
};

/// `workers` are the replicas' devices, `parameter_servers` the servers' (may be empty).
Bottleneck find_bottleneck(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline,
                           const RunMetrics& metrics, const std::vector<DeviceId>& workers,
                           const std::vector<DeviceId>& parameter_servers);

/// "bottleneck: PS NIC task:0/CPU:0<->eth (93% busy); PS CPU 41%, compute 38%, network 12%"
std::string bottleneck_text(const Bottleneck& bottleneck);

}  // namespace placesim
