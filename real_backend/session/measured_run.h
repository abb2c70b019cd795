// A measured run: load a scenario (placed and planned) or a plan file, execute it on a real
// backend, derive its metrics and compare it with the prediction of the same plan. What the
// `execute`, `validate --backend` and `calibrate` commands run; they only parse options and print.
#pragma once

#include <functional>
#include <string>

#include "real_backend/compare.h"
#include "real_backend/executor_factory.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/session/pipeline.h"

namespace placesim {

/// A plan and its cluster, from a scenario (placed and planned) or from a plan file.
struct LoadedPlan {
  std::string name;
  ExecutionPlan plan;
  Cluster cluster;
};
/// Placement notes go to `note` (one line each, without a prefix); null: dropped.
LoadedPlan load_scenario_or_plan(const std::string& path, const HardwareCatalog& catalog,
                                 const std::function<void(const std::string&)>& note = nullptr);

/// How to execute: the backend and the runs (execute's and validate's --backend, --warmup, ...).
struct MeasuredRunOptions {
  real::Backend backend = real::Backend::kCpu;
  int warmup_runs = 2;
  int timed_runs = 7;
  bool share_gpus = false;  ///< cuda: plan GPU k on GPU k mod (GPUs here)
  real::GpuDispatch gpu_dispatch = real::GpuDispatch::kAhead;
  /// Progress lines while running (null: none), and warnings about the machine (busy, or
  /// running at other rates than its profile; null: dropped). One line each, without a prefix.
  std::function<void(const std::string&)> progress;
  std::function<void(const std::string&)> warning;
};

/// A measured run's result. Under mpirun, every host executes its part; only rank 0 (the
/// reporting rank) has the merged timeline, and the others have nothing to report.
struct MeasuredRun {
  bool reporting_rank = true;
  SimulatedRun run;  ///< timeline (per-task medians) and metrics; empty on other ranks
};

/// Executes the plan (InputError when the backend or a device is missing) and derives metrics.
MeasuredRun execute_plan(const ExecutionPlan& plan, const Cluster& cluster, const MeasuredRunOptions& options);

/// A run of `plan` as a comparison sees it: the figures its JSON report gives (task kinds, device
/// names, durations).
real::ComparedRun compared_run(const ExecutionPlan& plan, const Cluster& cluster, const SimulatedRun& run);

/// Compares a prediction with a measurement of the same plan.
real::Comparison compare_runs(const ExecutionPlan& plan, const Cluster& cluster, const SimulatedRun& predicted,
                              const SimulatedRun& measured);

}  // namespace placesim
