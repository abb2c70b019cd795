// One scenario document varied many times without writing or reading JSON again: a sweep's
// configurations. What no variation changes (the model section, the run and simulation options,
// the perturbations) is read once, and each strategy variant's options once (UnplacedStrategy);
// a variation names a cluster template and size, a variant and its devices, the batch and the
// precision, and gets the Scenario its own document would give, after the same checks. An
// InputError names the JSON path in the scenario file of the option at fault.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/scenario/perturbations.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/strategy_reader.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {

struct ScenarioVariation {
  std::string cluster_template;
  int64_t nodes = 1;
  std::string fabric_link;  ///< "" = the template's
  size_t strategy = 0;      ///< into the variants
  std::vector<std::string> devices;  ///< the strategy's devices by name, in its order
  int64_t batch_size = 1;
  Precision precision = Precision::kFp32;
};

class ScenarioVariations {
 public:
  /// Reads what no variation changes from `document` (its "run" with the simulation tier left to
  /// the caller) and each variant's options. Throws InputError at the first problem.
  ScenarioVariations(Json document, const std::string& file, const HardwareCatalog& catalog,
                     const std::vector<StrategyVariant>& variants);

  /// Whether the document says how to simulate ("simulation").
  bool sets_simulation() const { return sets_simulation_; }

  /// What a variation decides of its strategy's options and run options before the graph is
  /// built (a sweep's 3D layout: data, micro-batches, the per-replica batch); may throw InputError.
  using Sizing = std::function<void(Strategy* strategy, RunOptions* run)>;

  /// The InputError scenario() gives when variant `strategy`'s options have `problem`
  /// (option_error): for a caller that sizes options itself, as the sweep's search tier does.
  InputError option_error(size_t strategy, const OptionProblem& problem) const {
    return placesim::option_error(strategies_.at(strategy), problem);
  }

  /// `sizing` may be empty; `reuse` (may be null): graphs and clusters earlier variations built.
  Scenario scenario(const ScenarioVariation& variation, const Sizing& sizing, ScenarioReuse* reuse) const;

  /// The document's zoo model with its "layers" parameter set to `layers`, for a variation's
  /// `run` (its scenario's, sized): the search screen's layer probes
  /// (sim/analytical/cell_extrapolation.h). InputError: the model is not a zoo model, or its zoo
  /// model takes no "layers" or not that many.
  OpGraph layer_probe_graph(const RunOptions& run, int64_t layers, ScenarioReuse* reuse) const;

  /// The document's "run", read once: what every variation starts from.
  const RunOptions& run() const { return run_; }

  /// Whether variant `strategy` asks for selective recomputation that selects no op of the
  /// document's model: its patterns (by default the unfused attention's scores, softmax and
  /// context) name none of its ops, as with fused attention, so every plan of the variant is the
  /// plan without it (false when it asks for none, or the model cannot be built: the variant's
  /// own scenarios then say why).
  bool selective_recompute_selects_nothing(size_t strategy, ScenarioReuse* reuse) const;

 private:
  Json document_;
  std::string file_;
  std::filesystem::path base_directory_;
  const HardwareCatalog* catalog_;
  std::string name_;
  std::string description_;
  RunOptions run_;
  bool sets_simulation_ = false;
  std::optional<Perturbations> perturbations_;
  std::vector<UnplacedStrategy> strategies_;
};

}  // namespace placesim
