#include "sim/scenario/scenario_variations.h"

#include <stdexcept>

#include "sim/cluster/cluster_builder.h"
#include "sim/cluster/precision_support.h"
#include "sim/core/glob.h"
#include "sim/core/input_error.h"
#include "sim/scenario/plan_fit.h"
#include "sim/scenario/scenario_parts.h"

namespace placesim {

ScenarioVariations::ScenarioVariations(Json document, const std::string& file, const HardwareCatalog& catalog,
                                       const std::vector<StrategyVariant>& variants)
    : document_(std::move(document)), file_(file), base_directory_(std::filesystem::path(file).parent_path()), catalog_(&catalog) {
  // The caller picks the tier; the rest of "simulation" stays.
  if (document_.contains("simulation") && document_["simulation"].is_object()) document_["simulation"].erase("tier");
  JsonReader reader(document_, file_);
  reader.expect_object();
  name_ = reader.string_or("name", std::filesystem::path(file_).stem().string());
  description_ = reader.string_or("description", "");
  run_ = read_run_options(reader);
  sets_simulation_ = reader.has("simulation");
  if (auto given = reader.find("perturbations")) perturbations_ = read_perturbations(*given);
  for (const StrategyVariant& variant : variants) {
    // The variant's options are where it was written: its kind's object, or a value in a list.
    const std::string strategy_path = variant.json_path.substr(0, variant.json_path.rfind('/'));
    UnplacedStrategy unplaced =
        read_unplaced_strategy(variant.label, variant.kind, JsonReader(variant.strategy.at(variant.kind), file_,
                                                                       variant.json_path),
                               strategy_path);
    for (const auto& [option, path] : variant.option_paths) unplaced.source.option_paths[variant.kind + "/" + option] = path;
    strategies_.push_back(std::move(unplaced));
  }
}

Scenario ScenarioVariations::scenario(const ScenarioVariation& variation, const Sizing& sizing, ScenarioReuse* reuse) const {
  Scenario scenario;
  scenario.file = file_;
  scenario.name = name_;
  scenario.description = description_;
  scenario.run = run_;
  scenario.run.batch_size = variation.batch_size;
  scenario.run.precision = variation.precision;
  UnplacedStrategy unplaced = strategies_.at(variation.strategy);
  if (sizing) sizing(&unplaced.strategy, &scenario.run);

  const JsonReader document(document_, file_);
  scenario.graph = build_model_graph(document.at("model"), scenario.run, base_directory_, reuse);
  require_fetched_ops_exist(document, scenario);
  auto fail_if_too_large = [&](const std::optional<PlanTooLarge>& refusal) {
    if (!refusal) return;
    const std::string path = refusal->blame == PlanTooLarge::kSteps ? "/run/steps"
                             : refusal->blame == PlanTooLarge::kModel ? "/model"
                             : refusal->key == "pipeline"             ? unplaced.source.path_of("pipeline/micro_batches")
                                                                      : unplaced.source.path_of(unplaced.kind);
    throw InputError(file_, path, refusal->message);
  };
  if (const auto& dp = unplaced.strategy.data_parallel) {
    fail_if_too_large(plan_too_large_before_cluster(scenario.graph, scenario.run,
                                                    static_cast<double>(variation.devices.size()),
                                                    dp->aggregation == Aggregation::kAllReduce, dp->algorithm,
                                                    dp->bucket_bytes));
  }

  std::optional<Cluster> uncached;
  const Cluster& shared = reused_in_place(
      reuse ? &reuse->clusters : nullptr,
      [&] { return variation.cluster_template + "|" + std::to_string(variation.nodes) + "|" + variation.fabric_link; },
      [&] { return build_template_cluster(variation.cluster_template, variation.nodes, variation.fabric_link, *catalog_); },
      [](const Cluster& cluster) { return cluster.devices().size(); }, &uncached);
  auto take_cluster = [&] { scenario.cluster = uncached ? std::move(*uncached) : Cluster(shared); };
  // Without perturbations the strategy is placed on the shared cluster and the scenario takes it
  // after: a variation the placement refuses (many of a search's layouts) copies none.
  if (perturbations_) {
    take_cluster();
    apply_perturbations(*perturbations_, &scenario.cluster, &scenario.run);
  }
  const Cluster& cluster = perturbations_ ? scenario.cluster : shared;

  std::vector<DeviceId> devices;
  devices.reserve(variation.devices.size());
  for (const std::string& name : variation.devices) {
    std::string error;
    const std::optional<DeviceName> spec = DeviceName::parse(name, &error);
    const std::vector<DeviceId> matches = spec ? cluster.match(*spec) : std::vector<DeviceId>{};
    if (matches.empty()) throw std::logic_error("a variation's device \"" + name + "\" is not in its cluster");
    devices.push_back(matches.front());
  }
  Strategy strategy = place_strategy(unplaced, devices, cluster);
  if (!perturbations_) take_cluster();
  locate_graph_ops(document.at("model"), base_directory_, &scenario);
  scenario.strategy_sources[strategy.name] = unplaced.source;
  scenario.strategies.push_back(std::move(strategy));

  const std::string unsupported = precision_unsupported_reason(scenario.cluster, scenario.run.precision);
  if (!unsupported.empty()) throw InputError(file_, "/run/precision", unsupported);
  fail_if_too_large(plan_too_large(scenario, scenario.strategies.front()));
  return scenario;
}

OpGraph ScenarioVariations::layer_probe_graph(const RunOptions& run, int64_t layers, ScenarioReuse* reuse) const {
  const JsonReader model = JsonReader(document_, file_).at("model");
  if (!model.has("zoo")) model.fail("a layer probe needs a zoo model");
  Json probe = model.value();
  probe["parameters"]["layers"] = layers;
  return build_model_graph(JsonReader(probe, file_, "/model"), run, base_directory_, reuse);
}

bool ScenarioVariations::selective_recompute_selects_nothing(size_t strategy, ScenarioReuse* reuse) const {
  const Strategy& variant = strategies_.at(strategy).strategy;
  if (!variant.parallelism || variant.parallelism->selective_recompute.empty()) return false;
  try {
    const OpGraph graph = build_model_graph(JsonReader(document_, file_).at("model"), run_, base_directory_, reuse);
    const std::vector<GlobPattern> patterns = glob_patterns(variant.parallelism->selective_recompute);
    for (OpId v = 0; v < graph.size(); ++v) {
      if (matches_any(patterns, graph.op(v).name)) return false;
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace placesim
