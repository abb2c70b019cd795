#include "sim/session/sweep_screen.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "sim/core/reuse_cache.h"
#include "sim/graph/model_flops.h"
#include "sim/scenario/parallelism_reader.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/spec_error_location.h"
#include "sim/scenario/strategy_devices.h"
#include "sim/session/layer_probe.h"
#include "sim/session/pipeline.h"

namespace placesim {
namespace {

/// A layout's cell, and the cluster, run and options of the configuration that analysed it
/// (not its scenario: a sweep's process keeps a cell per layout, and the graphs are large).
struct LayoutCell {
  size_t index = 0;
  std::shared_ptr<const Cluster> cluster;  ///< names the stages in memory verdicts
  RunOptions run;
  ParallelismOptions options;
  ClosedFormCell cell;
  /// MFU's inputs: per sample (the same for every data width of the layout), and the peak of
  /// one data replica's devices (every replica's devices are the node type's).
  double model_flops_per_sample = 0, hardware_flops_per_sample = 0, tokens_per_sample = 0;
  double peak_flops_per_second_per_replica = 0;
  /// Whether the analysing configuration asks for selective recomputation, and the hardware FLOPs
  /// per sample of a configuration that asks otherwise, when the cell serves both (their
  /// patterns select no op: SweepContext::Layout::selective_recompute_shares_cells).
  bool selective_recompute = false;
  double other_hardware_flops_per_sample = 0;
  /// The step by step-order key (its micro-batches and schedule): the same for every
  /// configuration sharing both (ZeRO 0 and 1 of a layout and data width), so estimated once.
  std::map<std::string, ClosedFormStepEstimate> steps;
};

/// Whether the configurations of screen key `key` differ in asking for selective recomputation
/// (a cell shared across it: SweepContext::Layout::selective_recompute_shares_cells).
bool mixes_selective_recompute(const SweepContext& context, const std::string& key) {
  for (size_t member : context.screen_groups.at(key)) {
    if (context.layouts[context.spec.configurations[member].strategy].selective_recompute_shares_cells) return true;
  }
  return false;
}

LayoutCell analyse_layout(const SweepContext& context, size_t index) {
  LayoutCell layout;
  layout.index = index;
  Scenario scenario = configuration_scenario(context, index);
  Strategy& strategy = scenario.strategies.front();
  layout.run = scenario.run;
  layout.options = *strategy.parallelism;
  try {
    // One cell serves every data width: its GEMMs run at the slowest of this configuration's GPUs,
    // another width's within 1.3% of that pace from 128 to 2,048 GPUs (docs/llm-planning.md, "Search speed").
    std::optional<ClosedFormCell> probed = layer_probed_cell(context, scenario);
    layout.cell = probed ? std::move(*probed)
                         : analyse_3d_cell(scenario.graph, scenario.cluster_for(strategy), scenario.run, layout.options);
  } catch (const SpecError& error) {
    throw locate_spec_error(scenario, strategy, error);  // as evaluate_configuration says it
  }
  const TrainingEfficiency efficiency = training_efficiency(scenario, strategy, 0.0);
  layout.model_flops_per_sample = efficiency.model_flops_per_sample;
  layout.hardware_flops_per_sample = efficiency.hardware_flops_per_sample;
  layout.tokens_per_sample = efficiency.tokens_per_sample;
  layout.peak_flops_per_second_per_replica =
      efficiency.peak_flops_per_second / static_cast<double>(layout.options.data);
  layout.selective_recompute = !layout.options.selective_recompute.empty();
  if (mixes_selective_recompute(context, screen_key(context, index))) {
    // As training_efficiency counts them for the other choice (a shared cell's run has no full
    // recomputation: make_sweep_context).
    layout.other_hardware_flops_per_sample =
        model_flops(scenario.graph, scenario.run.batch_size, scenario.run.kind == StepKind::kTraining,
                    layout.selective_recompute ? Recomputation::kNone : Recomputation::kSelective)
            .hardware_flops_per_sample;
  }
  layout.cluster = std::make_shared<const Cluster>(strategy.cluster ? std::move(*strategy.cluster) : std::move(scenario.cluster));
  return layout;
}

/// What `options` divides over its ZeRO shard group at `stage` and above (1: the optimizer
/// state, 2: the gradients): its shard group, or 1; `experts`: what an expert's divides over
/// instead (its holders in the shard group, ParallelismOptions::expert_zero_shards).
double zero_shards_from(const ParallelismOptions& options, int stage, bool experts) {
  if (options.zero_stage < stage) return 1.0;
  return static_cast<double>(experts ? options.expert_zero_shards() : options.zero_shards());
}

/// `estimate` with the optimizer state (ZeRO 1 and 2) and the gradients (ZeRO 2) divided by
/// `options`' shard groups instead of the cell's, whose ZeRO stage and data width may differ
/// (parallel_3d_builder.cpp divides each op's): the experts' part (`cell_memory`'s
/// expert_static_memory) over the expert shard groups, the rest over the ZeRO shard groups. The
/// rest of the memory is the cell's.
void reshard_memory(const ParallelismOptions& cell, const ClosedFormCell& cell_memory, const ParallelismOptions& options,
                    ClosedFormStepEstimate* estimate) {
  auto ratio = [&](int stage, bool experts) {
    return zero_shards_from(cell, stage, experts) / zero_shards_from(options, stage, experts);
  };
  const double optimizer = ratio(1, false), expert_optimizer = ratio(1, true);
  const double gradients = ratio(2, false), expert_gradients = ratio(2, true);
  for (size_t s = 0; s < estimate->stage_peak_memory.size(); ++s) {
    MemoryBreakdown& memory = estimate->stage_peak_memory[s];
    const MemoryBreakdown& experts = cell_memory.expert_static_memory.at(s);
    memory.optimizer_state_bytes = (memory.optimizer_state_bytes - experts.optimizer_state_bytes) * optimizer +
                                   experts.optimizer_state_bytes * expert_optimizer;
    memory.gradient_bytes = (memory.gradient_bytes - experts.gradient_bytes) * gradients +
                            experts.gradient_bytes * expert_gradients;
  }
}

/// `context`'s step order for `options` on `cell` (closed_form_step_order), built once per process.
/// `key`: closed_form_step_order_key(cell, options).
std::shared_ptr<const ClosedFormStepOrder> step_order(const SweepContext& context, const ClosedFormCell& cell,
                                                      const ParallelismOptions& options, const std::string& key) {
  return reused(
      &context.step_orders, [&] { return key; },
      [&] { return std::make_shared<const ClosedFormStepOrder>(closed_form_step_order(cell, options)); },
      [](const std::shared_ptr<const ClosedFormStepOrder>& order) {
        size_t slots = 0;
        for (const std::vector<PipelineSlot>& stage : order->schedule) slots += stage.size();
        return slots;
      });
}

/// `indices` in the order the screen analyses them: each key's narrowest data width first,
/// whatever order the sweep lists its node counts in. The stages' finish (gradient reductions
/// over the cell's data width) is then the cheapest of the key's, so wider configurations
/// mostly screen optimistic there and are ranked into the evaluated best rather than out of it
/// (the bundled Mixtral search listed widest first had excluded 12 acceptable configurations;
/// narrowest first none, but two within 0.3% of the 30-day target: docs/capacity-planning.md).
/// Keys stay together, in the order they first appear (a cell's recurrences serve its next
/// configurations only while it is the last cell analysed), and within a key and node count the
/// order is kept.
std::vector<size_t> narrowest_first(const SweepContext& context, const std::vector<size_t>& indices) {
  std::map<std::string, size_t> key_rank;
  for (size_t index : indices) key_rank.emplace(context.screen_keys.at(index), key_rank.size());
  std::vector<std::pair<size_t, size_t>> ranked;  // (key rank, index)
  ranked.reserve(indices.size());
  for (size_t index : indices) ranked.emplace_back(key_rank.at(context.screen_keys.at(index)), index);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return context.spec.configurations.at(a.second).nodes < context.spec.configurations.at(b.second).nodes;
  });
  std::vector<size_t> order;
  order.reserve(ranked.size());
  for (const auto& entry : ranked) order.push_back(entry.second);
  return order;
}

}  // namespace

const std::string& screen_key(const SweepContext& context, size_t index) { return context.screen_keys.at(index); }

std::vector<ScreenedConfiguration> screen_configurations(const SweepContext& context,
                                                         const std::vector<size_t>& indices, double* cell_seconds) {
  std::vector<ScreenedConfiguration> screened;
  if (cell_seconds) *cell_seconds = 0;
  std::map<std::string, LayoutCell> cells;
  // The last cell's recurrences by schedule, for its next data widths (ClosedFormRecurrence): one
  // cell's at a time, since a process screening many keeps every cell.
  const LayoutCell* recorded_cell = nullptr;
  std::map<PipelineSchedule, ClosedFormRecurrence> recurrences;
  const std::vector<size_t> order = narrowest_first(context, indices);
  std::map<size_t, ScreenedConfiguration> by_index;
  for (size_t index : order) {
    const std::string& key = screen_key(context, index);
    if (key.empty()) continue;
    const SweepConfiguration& configuration = context.spec.configurations.at(index);
    const StrategyVariant& variant = context.spec.strategies.at(configuration.strategy);
    ScreenedConfiguration screen;
    screen.cell_from = index;
    SweepRow& row = screen.row;
    row.index = index;
    row.tier = Tier::kSearch;
    try {
      auto layout = cells.find(key);
      if (layout == cells.end()) {
        const auto start = std::chrono::steady_clock::now();
        layout = cells.emplace(key, analyse_layout(context, index)).first;
        if (cell_seconds) *cell_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      LayoutCell& cell = layout->second;
      ParallelismOptions options = cell.options;
      RunOptions run = cell.run;
      const SweepContext::Layout& layout_of = context.layouts[configuration.strategy];
      options.schedule = layout_of.schedule;
      // A cell shared across ZeRO stages 0-2 (screen_key) may be another stage's; FSDP and ZeRO 3
      // layouts keep their own cells and the stage their reader gave them.
      if (!layout_of.per_data_width) options.zero_stage = layout_of.zero_stage;
      size_parallelism(variant, configuration, true, &options, &run);
      // What place_strategy and the planner check that a layout's data width or schedule can
      // change (the size limits, interleaving's schedule and Megatron-LM's micro-batch rule, expert
      // groups dividing the data width), refused as they refuse them, in their order; tensor
      // groups and stage devices are the cell's.
      MaybeProblem expert_groups;
      if (std::string problem = options.expert_groups_problem(); !problem.empty()) {
        expert_groups = OptionProblem{"expert", std::move(problem)};
      }
      for (const MaybeProblem& problem :
           {sized_parallelism_problem(options), virtual_stages_problem(options), expert_groups}) {
        if (problem) throw context.variations->option_error(configuration.strategy, *problem);
      }
      if (!cell_fits(cell.cell, options)) continue;
      screen.cell_from = cell.index;
      const std::string order_key = closed_form_step_order_key(cell.cell, options);
      auto step = cell.steps.find(order_key);
      if (step == cell.steps.end()) {
        if (recorded_cell != &cell) {
          recurrences.clear();
          recorded_cell = &cell;
        }
        step = cell.steps
                   .emplace(order_key, estimate_3d_step_from_cell(cell.cell, options,
                                                                  *step_order(context, cell.cell, options, order_key),
                                                                  &recurrences[options.schedule]))
                   .first;
      }
      ClosedFormStepEstimate estimate = step->second;
      reshard_memory(cell.options, cell.cell, options, &estimate);
      fill_closed_form_row(estimate, *cell.cluster, options, run.batch_size, &row);
      row.replicas = options.data;
      row.model_flops_per_sample = cell.model_flops_per_sample;
      row.hardware_flops_per_sample = layout_of.selective_recompute == cell.selective_recompute
                                          ? cell.hardware_flops_per_sample
                                          : cell.other_hardware_flops_per_sample;
      row.tokens_per_sample = cell.tokens_per_sample;
      row.peak_flops_per_second = cell.peak_flops_per_second_per_replica * static_cast<double>(options.data);
      // No one-replica baseline, so no scaling efficiency: the screen's step sees the data width
      // only through the cell's stage finishes, which are the cell's data width's.
    } catch (const InputError& error) {
      // Cannot be built or sized: the closed form refuses it too, with the same reason.
      screen.cell_from = index;
      row = not_applicable_row(index, Tier::kSearch, error);
    } catch (const std::invalid_argument& error) {  // a collective schedule that does not fit the group
      screen.cell_from = index;
      row = not_applicable_row(index, Tier::kSearch, error);
    }
    by_index.emplace(index, std::move(screen));
  }
  for (size_t index : indices) {
    auto screen = by_index.find(index);
    if (screen != by_index.end()) screened.push_back(std::move(screen->second));
  }
  return screened;
}

std::vector<SweepRow> search_rows(const SweepContext& context, const std::vector<size_t>& indices) {
  std::map<size_t, SweepRow> rows;
  for (ScreenedConfiguration& screen : screen_configurations(context, indices)) rows.emplace(screen.row.index, std::move(screen.row));
  std::vector<size_t> left;
  for (size_t index : indices) {
    if (rows.count(index) == 0) left.push_back(index);
  }
  for (SweepRow& row : evaluate_configurations(context, left, Tier::kAnalytical)) rows.emplace(row.index, std::move(row));
  std::vector<SweepRow> ordered;
  for (size_t index : indices) ordered.push_back(rows.at(index));
  return ordered;
}

}  // namespace placesim
