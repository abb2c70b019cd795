// The convergence replay: trains a TrainingProblem in-process by applying an UpdateTrace's updates
// in order, each gradient computed on exactly the parameter version the trace says its worker
// read, and records loss and accuracy against simulated time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/convergence/training_problem.h"
#include "sim/convergence/update_trace.h"

namespace placesim {

/// Evaluations after the target is reached: enough for a smooth curve, few enough that the
/// evaluations (the replay's main cost) mostly serve the time-to-target.
constexpr int64_t kPointsAfterTarget = 100;

struct ReplayOptions {
  double learning_rate = 0;       ///< per worker gradient (plain SGD)
  double target_loss = 0;         ///< evaluation loss to reach
  size_t batch_per_worker = 1;    ///< rows per worker gradient
  uint64_t seed = 0;              ///< minibatch and initialization streams
  /// Updates between evaluations until the target is reached (the last update is always
  /// evaluated). After it, the rest of the curve is thinned to about kPointsAfterTarget points.
  int64_t evaluate_every = 1;
  bool stop_at_target = false;    ///< end the replay at the first evaluation at the target
  /// Staleness-aware learning rate (Zhang et al. 2016, "Staleness-aware Async-SGD"): an update of
  /// staleness t > 1 uses learning_rate / t.
  bool scale_learning_rate_by_staleness = false;
  bool record_parameters = false;  ///< keep the parameters after every update (tests)
};

/// The model after `updates` updates.
struct CurvePoint {
  int64_t updates = 0;
  int64_t gradients = 0;          ///< computed so far, dropped ones included
  int64_t applied_gradients = 0;  ///< aggregated into the parameters so far
  double seconds = 0;     ///< simulated time of the last update (0 before the first)
  int64_t version_read = 0;  ///< of the last update
  int64_t staleness = 0;     ///< of the last update
  double loss = 0;
  double accuracy = 0;
};

struct ReplayResult {
  std::vector<CurvePoint> curve;          ///< from the initial parameters (updates = 0) on
  std::optional<CurvePoint> target;       ///< the first evaluation at or below the target loss
  std::vector<double> staleness;          ///< per update
  std::vector<std::vector<double>> parameters;  ///< after each update, when recorded
  std::vector<double> final_parameters;
};

/// Replays `trace` on `problem` from its seeded initial parameters. Training rows come from
/// `training`; losses and accuracies are measured on `evaluation`.
ReplayResult replay(const UpdateTrace& trace, const TrainingProblem& problem, const Dataset& training,
                    const Dataset& evaluation, const ReplayOptions& options);

}  // namespace placesim
