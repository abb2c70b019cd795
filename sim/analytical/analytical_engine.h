// The analytical tier: a plan's timeline in closed form, orders of magnitude faster than the
// SimGrid engine, for first passes over large sweeps (docs/capacity-planning.md). Same plan, same
// cost model, same engine contract (sim/engine/engine.h's rules: deps first, one compute
// task per device at a time, lowest ready id first), but no contention: a transfer takes its
// route's latency plus bytes over the bottleneck bandwidth as if alone, and an all-reduce takes
// its algorithm's alpha-beta estimate (sim/plan/collective_schedule.h). Never includes SimGrid.
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct AnalyticalStepEstimate {
  Timeline timeline;  ///< source "analytical"; every task's start and end
  double makespan_seconds = 0;
  double step_seconds = 0;  ///< makespan / plan.steps
};

/// Each task's time alone, by task id: a compute task's cost-model time (before any collective
/// overlapping it stretches it), a transfer's or a collective's time on the network. NaN: not
/// priced yet. A caller that schedules one plan, or parts of it, several times (the closed form:
/// the cell plan twice, then each slot alone) prices each task once.
struct TaskSeconds {
  std::vector<double> seconds;
  explicit TaskSeconds(size_t tasks);
};

/// Critical path of the plan DAG with device exclusivity (list scheduling). Throws
/// std::runtime_error when the plan has a dependency cycle. With `prices` (at least one entry per
/// task id of the plan: a plan made of the first tasks of another may share that one's), each
/// task's time is taken from there where it is there and written there where it is not: the same
/// timeline as without. With `handled` (one flag per task), only the flagged tasks run, a
/// dependency outside them never holding one back (ReadyTasks): the timeline of the plan made of
/// them alone, without copying it (the others' intervals stay empty). `successors`: the plan's
/// (ExecutionPlan::successors) for a caller scheduling it several times; null: built here.
AnalyticalStepEstimate estimate_step(const ExecutionPlan& plan, const Cluster& cluster, TaskSeconds* prices = nullptr,
                                     const std::vector<bool>* handled = nullptr,
                                     const SuccessorLists* successors = nullptr);

/// A transfer of `bytes` alone on its route (0 on the same device).
double analytical_transfer_seconds(double bytes, DeviceId from, DeviceId to, const Cluster& cluster);

/// A collective task (all-reduce, all-gather or reduce-scatter) alone on the network: the
/// cluster's measured curve where one applies (measured_collective_seconds); else, over one of
/// NCCL's transports, NCCL's latency and protocol with the links' bandwidth term
/// (nccl_collective_time); else its algorithm's alpha-beta estimate (collective_estimate_seconds)
/// over the transport's link efficiency (Transport::link_efficiency; null: the links only); 0 for
/// a group of one device or no bytes.
double analytical_collective_seconds(const Task& task, const Cluster& cluster, const Transport* transport = nullptr);

}  // namespace placesim
