// ConvergenceStudy: time-to-accuracy of each data-parallel strategy of a scenario, and of each
// staleness remedy, by replaying their simulated update order on the same generated problem.
// The verdict splits time-to-target into throughput x statistical efficiency against a
// staleness-free sequential SGD reference.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/spec/convergence_options.h"
#include "sim/convergence/replay.h"
#include "sim/convergence/simulated_timings.h"

namespace placesim {

/// One strategy's simulated timings, as the study's input.
struct StrategyTimings {
  std::string strategy;
  SimulatedTimings timings;
};

struct ConvergenceRun {
  std::string strategy;
  std::string variant;  ///< "as simulated", "lr / staleness", "bounded staleness 2", "1 backup worker", ...
  bool asynchronous = false;
  bool timed = true;     ///< false for the sequential reference
  int64_t workers = 0;
  int64_t simulated_steps = 0;  ///< steps simulated; the schedule repeats them
  double seconds_per_update = 0;  ///< mean simulated time between updates
  double mean_staleness = 0;
  double max_staleness = 0;
  /// Problem rows per worker gradient: `batch_per_worker` for a data-parallel worker's step, its
  /// micro-batch's share of it for a pipeline's (rounded), so a row stands for as many of the
  /// scenario's samples in every run.
  int64_t rows_per_gradient = 0;
  /// Samples aggregated into the parameters per simulated second, up to the target (or over
  /// the whole run when the target is not reached).
  double samples_per_second = 0;
  /// Reference samples (rows) to the target / this run's samples to the target (0 when not reached).
  double statistical_efficiency = 0;
  ReplayResult replay;

  /// "strategy, variant": the run's name in tables, charts and legends.
  std::string label() const { return strategy + ", " + variant; }
};

struct ConvergenceStudy {
  ConvergenceOptions options;
  std::string problem;  ///< "logistic" or "mlp"
  size_t parameters = 0;
  ConvergenceRun reference;          ///< sequential SGD, no clock
  std::vector<ConvergenceRun> runs;  ///< per strategy: as simulated, then each remedy
  std::vector<std::string> notes;
};

/// Runs every replay. Sync strategies with fewer replicas than a backup count + 1 skip it (noted).
ConvergenceStudy run_convergence_study(const std::vector<StrategyTimings>& strategies,
                                       const ConvergenceOptions& options);

/// The run that reaches the target first, if any reaches it.
const ConvergenceRun* fastest_to_target(const ConvergenceStudy& study, std::optional<bool> asynchronous = std::nullopt);

}  // namespace placesim
