// SimulatedTimings: the per-worker durations of a simulated data-parallel run, read from its plan
// and timeline, from which the convergence stage schedules as many updates as training needs
// (the simulated steps repeat periodically) under the base strategy or a remedy.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/plan/execution_plan.h"
#include "sim/spec/strategy.h"
#include "sim/timeline/timeline.h"

namespace placesim {

/// One asynchronous iteration of one worker: from the end of its previous update (or time 0) it
/// waits `wait_seconds` before reading the parameters, then `busy_seconds` until its gradient
/// has been applied (compute, push, apply).
struct IterationTiming {
  double wait_seconds = 0;
  double busy_seconds = 0;
};

/// One synchronous step, relative to the end of the previous one: when each worker's gradient
/// was ready, and how long the exchange and update took after the last one.
struct SyncStepTiming {
  std::vector<double> ready_seconds;  ///< per worker
  double tail_seconds = 0;
};

/// A pipeline's updates (a 3D strategy with stages): PipeDream's after every micro-batch, the
/// flushed schedules' and PipeDream-2BW's once per step.
struct PipelineTimings {
  int64_t stages = 0;
  int64_t replicas = 0;       ///< data-parallel replicas, each a gradient of every update
  int64_t micro_batches = 0;  ///< per step
  int64_t updates_per_step = 1;  ///< PipeDream: micro_batches; otherwise 1
  bool double_buffered = false;  ///< PipeDream-2BW (pipedream_weight_versions)
  /// When each update had ended on every stage and replica, from the run's start, in order: one
  /// per micro-batch (PipeDream) or per step.
  std::vector<double> update_end_seconds;
  /// PipeDream's replicated stages (ParallelismOptions::stage_replicas; update_end_seconds then
  /// empty): each stage's width, and by stage when each of its updates had ended on every one of
  /// its replicas, in order: one per round (a micro-batch of each of its replicas' streams),
  /// data / width x micro_batches per step.
  std::vector<int64_t> stage_replicas;
  std::vector<std::vector<double>> stage_update_end_seconds;
};

struct SimulatedTimings {
  bool asynchronous = false;
  int64_t workers = 0;
  int64_t simulated_steps = 0;
  std::vector<std::vector<IterationTiming>> iterations;  ///< async: per worker, per step
  std::vector<SyncStepTiming> steps;                     ///< sync: per step
  std::optional<PipelineTimings> pipeline;               ///< a pipeline: only this is set
};

/// The timings of a data-parallel training plan (replica-tagged tasks). Async: the version clock
/// is the first variable pulled (as in the staleness metric): a worker's read is its pull of that
/// variable, its update the server's apply of it. Throws std::invalid_argument for a plan that is
/// not data-parallel training.
SimulatedTimings extract_timings(const ExecutionPlan& plan, const Timeline& timeline);

/// The timings of a 3D training plan with `stages` pipeline stages and `replicas` data-parallel
/// replicas, `micro_batches` per step; `asynchronous`: PipeDream's schedule, an update per
/// micro-batch (an op's n-th optimizer task on a device is update n's), or with
/// `double_buffered` PipeDream-2BW's, an update per step. Throws std::invalid_argument for a
/// plan without those updates.
SimulatedTimings extract_pipeline_timings(const ExecutionPlan& plan, const Timeline& timeline, int64_t stages,
                                          int64_t replicas, int64_t micro_batches, bool asynchronous,
                                          bool double_buffered);

/// The timings of a PipeDream plan with replicated stages (`options.stage_replicas`): by stage,
/// its updates in order (an op's n-th optimizer task on a device of the stage is the stage's
/// update n), each ending when its last replica's does; workers = the `data` streams. Throws
/// std::invalid_argument for a plan without those updates.
SimulatedTimings extract_replicated_stage_timings(const ExecutionPlan& plan, const Timeline& timeline,
                                                  const ParallelismOptions& options);

}  // namespace placesim
