// Glue between the CLI and the real backend: load a scenario or a plan file, execute it on a
// backend with progress on stderr, predict it, and compare the two. Used by `execute`,
// `validate` and `calibrate`.
#pragma once

#include <string>

#include "cli/command.h"
#include "sim/session/pipeline.h"
#include "real_backend/compare.h"
#include "real_backend/executor_factory.h"

namespace placesim {

/// A plan and its cluster, from a scenario (placed and planned) or from a plan file.
struct LoadedPlan {
  std::string name;
  ExecutionPlan plan;
  Cluster cluster;
};
LoadedPlan load_scenario_or_plan(const std::string& path, const HardwareCatalog& catalog);

/// --backend, --warmup, --runs and --quiet, shared by execute and validate.
struct BackendOptions {
  std::string backend = "cpu";
  int warmup_runs = 2;
  int timed_runs = 7;
  bool quiet = false;
  bool share_gpus = false;
  std::string gpu_dispatch = "ahead";
};
void add_backend_options(CLI::App* command, BackendOptions* options);
real::Backend parse_backend_option(const std::string& text);

/// Executes the plan (InputError when the backend or a device is missing) and derives metrics.
SimulatedRun execute_plan(const ExecutionPlan& plan, const Cluster& cluster, const BackendOptions& options);

/// Compares a prediction with a measurement of the same plan, through their JSON reports.
real::Comparison compare_runs(const std::string& name, const ExecutionPlan& plan, const Cluster& cluster,
                              const SimulatedRun& predicted, const SimulatedRun& measured);

}  // namespace placesim
