// PlanEngine: something that turns an ExecutionPlan on a Cluster into a Timeline. The SimGrid
// engine predicts; the real backend measures; both honour the same contract:
//  - a task starts only after all its deps have ended;
//  - each device runs one compute task at a time, choosing the ready task with the lowest id;
//  - transfers run concurrently with compute and with each other, sharing link bandwidth.
// The first two are written once, in ReadyTasks (sim/plan/ready_tasks.h), which the SimGrid
// engine, the analytical tier, the real backend's dispatch loop and the CPU executor all use.
#pragma once

#include <memory>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim {

class PlanEngine {
 public:
  virtual ~PlanEngine() = default;
  /// Runs the whole plan. Throws std::runtime_error on an internal failure.
  virtual Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) = 0;
};

}  // namespace placesim
