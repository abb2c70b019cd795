// Turns a placed model graph into an ExecutionPlan: forward tasks in topological order, a
// transfer for every tensor that crosses devices (once per destination, as TensorFlow's
// Send/Recv pairs do), backward tasks in reverse order with gradient transfers, one optimizer
// update per op with parameters, repeated for K steps.
#pragma once

#include "sim/graph/op_graph.h"
#include "sim/placement/placement.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"

namespace placesim {

ExecutionPlan build_plan(const OpGraph& graph, const Placement& placement, const Cluster& cluster,
                         const RunOptions& run, const std::string& name);

/// Optimizer cost per parameter element: FLOPs and bytes of state read+written (see
/// docs/cost-model.md), and extra persistent state in parameter-sized copies.
struct OptimizerCost {
  double flops_per_parameter;
  double bytes_per_parameter;
  double state_copies;
};
OptimizerCost optimizer_cost(Optimizer optimizer, double dtype_bytes);

/// The update of op `op`'s parameters on `device`, after task `after` (its gradient is ready).
Task optimizer_task(const Op& op, Optimizer optimizer, DeviceId device, int64_t step, int64_t replica, TaskId after);

}  // namespace placesim
