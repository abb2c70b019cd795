// Placement: which device runs each op of a graph — the output of the placement stage that
// every later strategy reuses — plus the placer implementing TensorFlow's semantics.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/glob.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct Placement {
  std::vector<DeviceId> device_of_op;  ///< indexed by OpId
  std::vector<std::string> notes;      ///< soft-placement fallbacks, in op order
};

/// Places every op the way TensorFlow's placer does:
///  1. an op's requested device is the first matching rule, else the device the graph names;
///  2. without a request, ops go to /gpu:0 when the cluster has a GPU, else /cpu:0;
///  3. CPU-only ops stay on a CPU; 4. colocated ops (a variable with its read/Assign) share one
///  device, the first explicit request in the group winning.
/// A request naming no device, or a CPU-only op pinned to an accelerator, is a SpecError
/// (naming the rule, "placement/rules/R/device", or the op's own device) unless allow_soft_placement is on, in
/// which case the op falls back to the default device and a note records it.
Placement place_ops(const OpGraph& graph, const Cluster& cluster, const PlacementOptions& options);


}  // namespace placesim
