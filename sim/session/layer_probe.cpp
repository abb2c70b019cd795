#include "sim/session/layer_probe.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include "sim/analytical/cell_extrapolation.h"

namespace placesim {
namespace {

/// Layers per model chunk of the two layer probes (cell_extrapolation.h). In the tests every
/// number of a cell but the stages' finish lies on the line through probes of 2 and 3 layers per
/// chunk (layer_probe_test.cpp); the finish all-reduces gradients in buckets of a fixed size,
/// ceil(bytes / bucket) of them, so its error grows with how far the line is drawn out: on the
/// bundled Mixtral search probes of 1 and 2 layers per chunk put the screen's samples/s up to
/// 4.1% from the whole cells', 2 and 3 up to 0.87%. A layout with no more layers per chunk than
/// the two probes hold together (5) is analysed whole, which then costs no more.
constexpr int64_t kShallowProbeLayers = 2, kDeepProbeLayers = 3;

/// Whether `full`'s totals (ops, FLOPs, parameters, activations) lie on the line through the
/// probes' at their layer counts: every layer adds the same, as the probes assume.
bool layers_alike(const OpGraph& shallow, int64_t shallow_layers, const OpGraph& deep, int64_t deep_layers,
                  const OpGraph& full, int64_t layers) {
  const GraphTotals a = shallow.totals(), b = deep.totals(), c = full.totals();
  auto on_line = [&](double x, double y, double z) {
    return std::abs(at_layers(x, shallow_layers, y, deep_layers, layers) - z) <= 1e-9 * std::max(1.0, std::abs(z));
  };
  return on_line(static_cast<double>(a.ops), static_cast<double>(b.ops), static_cast<double>(c.ops)) &&
         on_line(a.forward_flops, b.forward_flops, c.forward_flops) &&
         on_line(a.backward_flops, b.backward_flops, c.backward_flops) &&
         on_line(a.parameter_count, b.parameter_count, c.parameter_count) &&
         on_line(a.activation_bytes, b.activation_bytes, c.activation_bytes);
}

}  // namespace

int64_t numbered_layers(const OpGraph& graph) {
  std::set<std::string_view> layers;
  std::string_view prefix, previous;
  for (OpId v = 0; v < graph.size(); ++v) {
    const std::string& layer = graph.op(v).layer;
    if (layer == previous) continue;  // a layer's ops are mostly consecutive: one look per run
    previous = layer;
    const std::string_view layer_prefix = numbered_layer_prefix(layer);
    if (layer_prefix.empty()) continue;
    if (prefix.empty()) prefix = layer_prefix;
    if (layer_prefix != prefix) return 0;
    layers.insert(layer);
  }
  return static_cast<int64_t>(layers.size());
}

std::optional<ClosedFormCell> layer_probed_cell(const SweepContext& context, const Scenario& scenario) {
  const Strategy& strategy = scenario.strategies.front();
  const ParallelismOptions& options = *strategy.parallelism;
  // Expert groups that do not divide the data width: the whole model's analysis refuses it.
  if (!options.whole_layer_stages || !options.expert_groups_problem().empty()) return std::nullopt;
  const int64_t chunks = options.pipeline * options.virtual_stages;
  const int64_t layers = numbered_layers(scenario.graph);
  if (layers == 0 || layers % chunks != 0 || layers / chunks <= kShallowProbeLayers + kDeepProbeLayers) {
    return std::nullopt;
  }
  const int64_t shallow_layers = kShallowProbeLayers * chunks, deep_layers = kDeepProbeLayers * chunks;
  try {
    const OpGraph shallow = context.variations->layer_probe_graph(scenario.run, shallow_layers, &context.reuse);
    const OpGraph deep = context.variations->layer_probe_graph(scenario.run, deep_layers, &context.reuse);
    if (numbered_layers(shallow) != shallow_layers || numbered_layers(deep) != deep_layers ||
        !layers_alike(shallow, shallow_layers, deep, deep_layers, scenario.graph, layers)) {
      return std::nullopt;
    }
    const Cluster& cluster = scenario.cluster_for(strategy);
    return extrapolate_cell(analyse_3d_cell(shallow, cluster, scenario.run, options), shallow_layers,
                            analyse_3d_cell(deep, cluster, scenario.run, options), deep_layers, layers);
  } catch (const std::exception&) {
    return std::nullopt;  // the whole model's analysis says what is wrong, or succeeds
  }
}

}  // namespace placesim
