// Turns a placed model graph into an ExecutionPlan: forward tasks in topological order, a
// transfer for every tensor that crosses devices (once per destination, as TensorFlow's
// Send/Recv pairs do), backward tasks in reverse order with gradient transfers, one optimizer
// update per op with parameters, repeated for K steps.
#pragma once

#include "sim/graph/op_graph.h"
#include "sim/placement/placement.h"
#include "sim/plan/execution_plan.h"
#include "sim/planner/optimizer_cost.h"
#include "sim/spec/run_options.h"

namespace placesim {

ExecutionPlan build_plan(const OpGraph& graph, const Placement& placement, const Cluster& cluster,
                         const RunOptions& run, const std::string& name);

/// The update of op `op`'s parameters on `device`, after task `after` (its gradient is ready).
Task optimizer_task(const Op& op, const OptimizerStep& optimizer, DeviceId device, int64_t step, int64_t replica, TaskId after);

}  // namespace placesim
