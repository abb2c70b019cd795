// PlacementProblem: what every automatic placer sees of a graph on a cluster — ops in
// topological order, colocation groups, the devices each op may use (CPU-only ops: CPUs only),
// each op's compute time on each device (sim/cost roofline, forward + backward when training),
// the communication time of a tensor between two devices (sim/cost on the cluster's real route)
// and each device's memory budget.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct PlacementProblem {
  const OpGraph* graph = nullptr;
  const Cluster* cluster = nullptr;
  RunOptions run;
  std::vector<OpId> order;        ///< a topological order (stable in graph order)
  std::vector<size_t> position;   ///< by OpId: index in `order`
  std::vector<OpId> group_of;     ///< by OpId: the leader (first op in graph order) of its colocation group
  std::vector<std::vector<OpId>> members;  ///< by leader: the group's ops in topological order
  std::vector<bool> cpu_only;     ///< by leader: some member has no accelerator kernel
  std::vector<bool> needs_gradient;  ///< by OpId: training computes this op's backward
  std::vector<DeviceId> devices;  ///< the devices the placer may use, in cluster order
  std::vector<double> capacity_bytes;  ///< by DeviceId: memory_bytes x memory_fraction; 0 when not usable
  std::vector<std::vector<double>> compute_seconds;  ///< [op][device]: forward (+ backward) time
  std::vector<double> bottom_level_seconds;  ///< by OpId: longest path to a sink, mean compute, no communication

  /// Can op `v` run on device `d`: `d` is usable and, for a CPU-only group, a CPU.
  bool allowed(OpId v, DeviceId d) const;
  /// Time to move `bytes` from `from` to `to` alone on the route (0 on one device).
  double transfer_seconds(double bytes, DeviceId from, DeviceId to) const;
  /// The cost of data edge u -> v when u runs on `from` and v on `to`: the forward tensor, plus
  /// its gradient back when training differentiates both ends.
  double edge_seconds(OpId u, OpId v, double edge_bytes, DeviceId from, DeviceId to) const;
  /// The usable accelerators (GPUs, TPUs) in cluster order, else the usable CPUs.
  std::vector<DeviceId> accelerators_or_cpus() const;
  /// Throws SpecError at the strategy's "placement/auto" with `message`.
  [[noreturn]] void fail(const std::string& message) const;

  std::vector<double> route_latency_seconds;     ///< [from * n + to]
  std::vector<double> route_seconds_per_byte;    ///< [from * n + to]
};

/// Builds the problem. Throws SpecError ("placement/auto") when the graph has a cycle or a CPU-only group has no
/// usable CPU.
PlacementProblem make_placement_problem(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                        const AutoPlacementOptions& options);

}  // namespace placesim
