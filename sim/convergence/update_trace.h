// UpdateTrace: the order in which a data-parallel run or a pipeline changes the parameters, as the
// convergence replay consumes it: for each update, when it was applied (simulated seconds), which
// parameter version its gradients were computed on (per layer, for PipeDream's stages; per stage
// and gradient for its replicated stages, where each stage updates its own layers at its own
// rate), and whose gradients (worker, iteration) it carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace placesim {

/// One worker's gradient: the worker and which of its iterations (selects its minibatch).
struct GradientSource {
  int64_t worker = 0;
  int64_t iteration = 0;
};

struct TracedUpdate {
  double apply_seconds = 0;  ///< simulated time the parameters changed
  /// The parameter version the gradients were computed on: the number of updates applied
  /// before the read. Update u with version u is fresh; u - version is its staleness.
  int64_t version_read = 0;
  std::vector<GradientSource> gradients;  ///< one (async) or the aggregated workers (sync)
  /// The update is learning_rate x gradient_weight x the sum of its gradients: 1 for async and
  /// for a full sync step; replicas / aggregated when backup workers dropped some gradients.
  double gradient_weight = 1;
  int64_t gradients_computed = 1;  ///< gradients computed for it, including dropped ones
  /// Replicated stages: the stage whose layers this update changes (its `stage_update`-th
  /// update); -1 (every other trace): every layer.
  int64_t stage = -1;
  int64_t stage_update = 0;
  /// Replicated stages: by gradient (as `gradients`), by stage, how many of that stage's updates
  /// had been applied to the weights the gradient was computed on. Empty otherwise.
  std::vector<std::vector<int64_t>> stage_versions;
};

struct UpdateTrace {
  int64_t workers = 0;
  bool asynchronous = false;
  bool timed = true;  ///< false for the sequential reference, which has no clock
  std::vector<TracedUpdate> updates;  ///< in apply order
  /// PipeDream's pipeline: per layer of the problem (input side first), how many updates older
  /// than the update's own predecessor that layer's weights are when its gradient is computed
  /// (update u reads layer l at version u - layer_staleness[l]); `version_read` is then the oldest
  /// layer's. Empty: every layer reads `version_read`.
  std::vector<int64_t> layer_staleness;
  /// PipeDream's replicated stages (ParallelismOptions::stage_replicas): per layer of the
  /// problem (input side first), its stage. Each update then changes its own stage's layers
  /// only, and each of its gradients reads every stage's layers at that gradient's
  /// TracedUpdate::stage_versions; `version_read` is the update's own stage's oldest. Empty otherwise.
  std::vector<int64_t> layer_stage;
};

}  // namespace placesim
