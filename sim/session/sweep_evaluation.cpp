#include "sim/session/sweep_evaluation.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "sim/session/pipeline.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "sim/engine/engine_factory.h"
#include "sim/report/data_parallel_metrics.h"
#include "sim/report/memory_verdict.h"
#include "sim/report/metrics.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/spec_error_location.h"
#include "sim/scenario/sweep_reader.h"
#include "sim/plan/collective_schedule.h"
#include "sim/spec/collective_algorithm.h"

namespace placesim {
namespace {

Timeline run_tier(const ExecutionPlan& plan, const Cluster& cluster, Tier tier) {
  return make_engine(tier)->simulate(plan, cluster);
}

/// Throughput and step time: a data-parallel run's own (async: workers' rates summed).
std::pair<double, double> throughput_and_step(const ExecutionPlan& plan, const Timeline& timeline,
                                              const RunMetrics& metrics, bool data_parallel,
                                              DataParallelMetrics* dp_metrics) {
  if (!data_parallel) return {metrics.samples_per_second, metrics.step_time_seconds};
  *dp_metrics = compute_data_parallel_metrics(plan, timeline);
  return {dp_metrics->samples_per_second, dp_metrics->step_time_seconds};
}

/// One micro-batch's cells that configurations of a group share (configurations_sharing_cells):
/// their step's and their one-replica baseline's, analysed by the first that needs each.
struct SharedCells {
  std::optional<ClosedFormCell> step, single_replica;
};

/// `*slot`'s cell when it fits `options` (cell_fits), else `options`' own, kept in `*slot`.
const ClosedFormCell& cell_of(std::optional<ClosedFormCell>* slot, const Scenario& scenario, const Cluster& cluster,
                              const ParallelismOptions& options) {
  if (!*slot || !cell_fits(**slot, options)) slot->emplace(analyse_3d_cell(scenario.graph, cluster, scenario.run, options));
  return **slot;
}

/// One replica's throughput on the same tier, the scaling baseline. A 3D layout: data 1 on the
/// first replica's tensor x pipeline devices, as `run` takes it (the closed-form tier on the
/// analytical tier, but for PipeDream's schedule, which has no cells). Otherwise the same model, per-device batch and
/// precision on the strategy's first device alone.
double single_replica_samples_per_second(const Scenario& scenario, const Strategy& strategy, Tier tier,
                                         SharedCells* shared) {
  const Strategy single = single_replica_strategy(strategy);
  const Cluster& cluster = scenario.cluster_for(single);
  if (single.parallelism && tier == Tier::kAnalytical && !single.parallelism->asynchronous) {
    const ClosedFormStepEstimate estimate = estimate_3d_step_from_cell(
        cell_of(&shared->single_replica, scenario, cluster, *single.parallelism), *single.parallelism);
    return static_cast<double>(scenario.run.batch_size) / estimate.step_seconds;
  }
  PlannedScenario planned = plan_strategy(scenario, single);
  Timeline timeline = run_tier(planned.plan, cluster, tier);
  if (single.parallelism) return compute_metrics(planned.plan, cluster, timeline).samples_per_second;
  return compute_data_parallel_metrics(planned.plan, timeline).samples_per_second;
}

/// "FILE: /path: message" -> "/path: message" (the file is the sweep's own scenario).
std::string without_file(const InputError& error) {
  std::string text = error.what();
  if (!error.file().empty() && text.rfind(error.file() + ": ", 0) == 0) text = text.substr(error.file().size() + 2);
  return text;
}

/// A 3D configuration on the analytical tier: the closed-form tier (sim/analytical/
/// pipeline_closed_form.h), which gives the analytical tier's step without the step's plan, and
/// each stage's peak memory.
void evaluate_closed_form(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                          SharedCells* shared, SweepRow* row) {
  const ParallelismOptions& p = *strategy.parallelism;
  fill_closed_form_row(estimate_3d_step_from_cell(cell_of(&shared->step, scenario, cluster, p), p), cluster, p,
                       scenario.run.batch_size, row);
}

/// Plans and runs `scenario`'s one strategy on `tier` into `row` (SpecError: a strategy the
/// planners refuse).
void evaluate_scenario(const Scenario& scenario, Tier tier, SharedCells* shared, SweepRow* result) {
  SweepRow& row = *result;
  const Strategy& strategy = scenario.strategies.front();
  const Cluster& cluster = scenario.cluster_for(strategy);
  const TrainingEfficiency efficiency = training_efficiency(scenario, strategy, 0.0);
  row.model_flops_per_sample = efficiency.model_flops_per_sample;
  row.hardware_flops_per_sample = efficiency.hardware_flops_per_sample;
  row.tokens_per_sample = efficiency.tokens_per_sample;
  row.peak_flops_per_second = efficiency.peak_flops_per_second;
  if (strategy.parallelism) row.replicas = strategy.parallelism->data;
  // PipeDream's schedule has no one-step cells to repeat: its whole plan on the analytical tier.
  if (strategy.parallelism && tier == Tier::kAnalytical && !strategy.parallelism->asynchronous) {
    evaluate_closed_form(scenario, strategy, cluster, shared, &row);
    if (row.status == RowStatus::kOk) {
      row.single_replica_samples_per_second = strategy.parallelism->data == 1
                                                  ? row.samples_per_second
                                                  : single_replica_samples_per_second(scenario, strategy, tier, shared);
    }
    return;
  }
  PlannedScenario planned = plan_strategy(scenario, strategy);
  const ExecutionPlan& plan = planned.plan;
  Timeline timeline = run_tier(plan, cluster, tier);
  RunMetrics metrics = compute_metrics(plan, cluster, timeline);
  DataParallelMetrics dp;
  auto [throughput, step] = throughput_and_step(plan, timeline, metrics, strategy.data_parallel.has_value(), &dp);
  row.samples_per_second = throughput;
  row.step_seconds = step;
  row.tasks = plan.tasks.size();

  const std::vector<DeviceId>& devices = strategy.data_parallel ? strategy.data_parallel->replicas
                                         : strategy.pipeline    ? strategy.pipeline->devices
                                                                : strategy.parallelism->devices;
  const double steps = static_cast<double>(std::max<int64_t>(plan.steps, 1));
  double busy = 0;
  for (DeviceId id : devices) busy += metrics.devices[id].busy_seconds;
  double compute = busy / static_cast<double>(devices.size()) / steps;
  double idle = std::max(0.0, step - compute);
  split_step_time(step, compute, metrics.exposed_transfer_seconds / steps, dp.straggler_loss_seconds,
                  strategy.data_parallel ? 0.0 : idle, &row);

  if (const DeviceMetrics* fullest = fullest_device(metrics); fullest && fullest->peak_memory_bytes > 0) {
    row.peak_memory_bytes = fullest->peak_memory_bytes;
    row.memory_capacity_bytes = fullest->memory_capacity_bytes;
  }
  std::vector<std::string> verdicts = out_of_memory_verdicts(metrics, cluster);
  if (!verdicts.empty()) {
    row.status = RowStatus::kOutOfMemory;
    row.reason = verdicts.front();
    if (verdicts.size() > 1) row.reason += " (and " + std::to_string(verdicts.size() - 1) + " more devices)";
    return;
  }
  // A 3D layout of data 1 is its own baseline; a pipeline's is its model on its first device.
  if (strategy.data_parallel) row.replicas = static_cast<int64_t>(strategy.data_parallel->replicas.size());
  row.single_replica_samples_per_second = strategy.parallelism && strategy.parallelism->data == 1
                                              ? row.samples_per_second
                                              : single_replica_samples_per_second(scenario, strategy, tier, shared);
}

/// `variant`'s "parallelism" without a GPipe or 1F1B "schedule", nor "sequence_parallel" or "tp_comm_overlap" at tensor 1,
/// nor "selective_recompute": false (SweepContext::layouts).
SweepContext::Layout flushed_layout(const StrategyVariant& variant) {
  SweepContext::Layout layout;
  if (variant.kind != "parallelism") return layout;
  Json options = variant.strategy.at("parallelism");
  if (options.contains("schedule")) {
    const Json& schedule = options["schedule"];
    if (schedule != "gpipe" && schedule != "1f1b") return layout;  // PipeDream's: no cells
    layout.schedule = schedule == "gpipe" ? PipelineSchedule::kGpipe : PipelineSchedule::kOneFOneB;
    options.erase("schedule");
  }
  // Sequence parallelism shards what a tensor group's ranks share; without a tensor group (tensor
  // 1) the plan is the same with it or without it, so both name one layout and share its cells.
  const auto tensor = options.find("tensor");
  if (tensor == options.end() || *tensor == Json(1)) {
    options.erase("sequence_parallel");
    options.erase("tp_comm_overlap");
  }
  // "selective_recompute": false is the default: the same layout as leaving it out.
  if (options.value("selective_recompute", Json(true)) == Json(false)) options.erase("selective_recompute");
  layout.text = options.dump();
  const auto zero = options.find("zero");
  if (zero != options.end() && zero->is_number_integer()) layout.zero_stage = zero->get<int>();
  return layout;
}

/// The layout text the analytical tier shares cells by: `layout.text` without selective
/// recomputation whose patterns select no op of the model, which leaves every plan as it is (the
/// configurations' hardware FLOPs, which count the recomputation, are their own: evaluate_scenario).
std::string cell_layout_text(const SweepContext::Layout& layout) {
  if (!layout.selective_recompute_shares_cells) return layout.text;
  Json options = Json::parse(layout.text);
  options.erase("selective_recompute");
  options.erase("selective_recompute_ops");
  return options.dump();
}

/// The layout text the search tier's screen shares cells by: `layout.text` without a ZeRO stage
/// of 0, 1 or 2. Those stages run the same slots (ZeRO 1 and 2 reduce the gradients with the
/// same bytes as an all-reduce, parallel_3d_gradient_emitter.cpp) and differ in the static
/// memory the screen reshards exactly and in the updates, each 1/shards of the parameters, which
/// a shared cell prices at its own stage's (a stage's finish, within the screen's bound).
std::string screen_layout_text(const SweepContext::Layout& layout) {
  if (layout.text.empty() || layout.zero_stage > 2) return layout.text;
  // Less selective recomputation that selects nothing, as the analytical tier's cells; the
  // configurations' hardware FLOPs, which count the recomputation, are their own (sweep_screen.cpp).
  Json options = Json::parse(cell_layout_text(layout));
  options.erase("zero");
  return options.dump();
}

/// What a configuration's one micro-batch cell depends on besides a GPipe or 1F1B schedule: its
/// node type, nodes, fabric, batch and precision, and its variant's layout. "" for what shares
/// none (its variant's layout is "").
std::string cell_key(const SweepSpec& spec, const SweepConfiguration& configuration, const SweepContext::Layout& layout) {
  if (layout.text.empty()) return "";
  const StrategyVariant& variant = spec.strategies.at(configuration.strategy);
  return std::to_string(configuration.node_type) + "|" + std::to_string(configuration.devices_per_node) + "|" +
         std::to_string(configuration.nodes) + "|" + configuration.fabric + "|" +
         std::to_string(configuration.batch_size) + "|" + configuration.precision + "|" +
         std::to_string(variant.micro_batch_size) + "|" + (variant.sets_micro_batches ? "m" : "") + "|" +
         (variant.sets_algorithm ? "a" : "") + "|" + std::to_string(layout.id);
}

/// Whether a layout's cells serve one data width only. Its slots move with the data width: ZeRO 3
/// and FSDP gather parameters over it, and with the stages outermost (`device_order`) replica 0's
/// stages sit elsewhere. Or whether it can be planned at all does: the collective algorithm it
/// names needs some group shape (applies_to_any_group), which the planner checks on each
/// data-parallel group and a cell of another width cannot.
/// Experts do not move the slots: an expert group is `expert` consecutive replicas whatever their
/// number, so replica 0's all-to-alls run on the same devices; what the data width changes (each
/// expert's gradients reduced over data / expert replicas) is in the stages' finish, as the dense
/// gradients are.
bool cells_per_data_width(const StrategyVariant& variant) {
  const Json& options = variant.strategy.at("parallelism");
  const auto zero = options.find("zero");
  const auto algorithm = options.find("algorithm");
  std::optional<CollectiveAlgorithm> named;
  if (algorithm != options.end() && algorithm->is_string()) named = parse_collective_algorithm(algorithm->get<std::string>());
  const bool any_group = algorithm == options.end() || (named && applies_to_any_group(*named));
  return (zero != options.end() && zero->is_number() && zero->get<double>() >= 3) || options.contains("fsdp") ||
         options.contains("device_order") || !any_group;
}

/// The configurations one screened cell serves: node type, GPUs per node, fabric (or one
/// node), precision, micro-batch size and layout, whatever the schedule and batch, and whatever
/// the data width unless the layout has cells per data width (then also the node count). "" for
/// layouts without cells (other strategies, PipeDream) and variants that set "micro_batches".
std::string screen_key(const SweepSpec& spec, const SweepConfiguration& configuration, const SweepContext::Layout& layout) {
  if (!layout.screened) return "";
  const StrategyVariant& variant = spec.strategies.at(configuration.strategy);
  return std::to_string(configuration.node_type) + "|" + std::to_string(configuration.devices_per_node) + "|" +
         (configuration.nodes > 1 ? configuration.fabric : std::string("one node")) + "|" + configuration.precision +
         "|" + std::to_string(variant.micro_batch_size) + "|" + (variant.sets_algorithm ? "a" : "") + "|" +
         std::to_string(layout.screen_id) + (layout.per_data_width ? "|" + std::to_string(configuration.nodes) + " nodes" : "");
}

}  // namespace

SweepContext make_sweep_context(Json document, const std::string& file, const HardwareCatalog& catalog) {
  SweepContext context;
  context.spec = read_sweep_spec(JsonReader(document, file), catalog);
  context.variations = std::make_shared<const ScenarioVariations>(std::move(document), file, catalog, context.spec.strategies);
  // A run with full recomputation refuses selective recomputation besides it, configuration by
  // configuration: such variants keep cells of their own.
  const bool full_recomputation = context.variations->run().recompute;
  std::map<std::string, size_t> first_of_text, first_of_screen_text;
  // Whether selective recomputation selects nothing, by the variant's "selective_recompute_ops"
  // ("" for the default patterns): one look at the model per pattern list, not per variant.
  std::map<std::string, bool> selects_nothing_by_patterns;
  for (size_t v = 0; v < context.spec.strategies.size(); ++v) {
    const StrategyVariant& variant = context.spec.strategies[v];
    SweepContext::Layout layout = flushed_layout(variant);
    layout.screened = !layout.text.empty() && !variant.sets_micro_batches;
    layout.per_data_width = layout.screened && cells_per_data_width(variant);
    if (variant.kind == "parallelism") {
      const Json& options = variant.strategy.at("parallelism");
      layout.selective_recompute = options.value("selective_recompute", Json(false)) == Json(true);
      if (layout.screened && layout.selective_recompute && !full_recomputation) {
        const auto patterns = options.find("selective_recompute_ops");
        const std::string given = patterns == options.end() ? "" : patterns->dump();
        auto known = selects_nothing_by_patterns.find(given);
        if (known == selects_nothing_by_patterns.end()) {
          known = selects_nothing_by_patterns
                      .emplace(given, context.variations->selective_recompute_selects_nothing(v, &context.reuse))
                      .first;
        }
        layout.selective_recompute_shares_cells = known->second;
      }
    }
    layout.id = first_of_text.emplace(cell_layout_text(layout), context.layouts.size()).first->second;
    // Layouts with a cell per data width keep one per ZeRO stage too (the screen takes their
    // reader's stage).
    const std::string screen_text = layout.per_data_width ? layout.text : screen_layout_text(layout);
    layout.screen_id = first_of_screen_text.emplace(screen_text, context.layouts.size()).first->second;
    context.layouts.push_back(layout);
  }
  for (const SweepConfiguration& configuration : context.spec.configurations) {
    const SweepContext::Layout& layout = context.layouts[configuration.strategy];
    context.cell_keys.push_back(cell_key(context.spec, configuration, layout));
    if (!context.cell_keys.back().empty()) context.cell_groups[context.cell_keys.back()].push_back(configuration.index);
    context.screen_keys.push_back(screen_key(context.spec, configuration, layout));
    if (!context.screen_keys.back().empty()) context.screen_groups[context.screen_keys.back()].push_back(configuration.index);
  }
  return context;
}

Scenario configuration_scenario(const SweepContext& context, size_t index) {
  const SweepConfiguration& configuration = context.spec.configurations.at(index);
  const StrategyVariant& variant = context.spec.strategies.at(configuration.strategy);
  ScenarioVariation variation;
  const NodeType& type = context.spec.node_types.at(configuration.node_type);
  variation.cluster_template = type.template_id;
  variation.nodes = configuration.nodes;
  variation.fabric_link = configuration.nodes > 1 ? configuration.fabric : "";
  variation.strategy = configuration.strategy;
  variation.devices = configuration_devices(context.spec, configuration);
  variation.batch_size = configuration.batch_size;
  variation.precision = *parse_precision(configuration.precision);
  ScenarioVariations::Sizing sizing;
  if (variant.kind == "parallelism") {
    // Called inside scenario() below, after this block: capture what it reads by value or from
    // the context, which outlives the call.
    const bool sets_simulation = context.variations->sets_simulation();
    sizing = [&variant, &configuration, sets_simulation](Strategy* strategy, RunOptions* run) {
      size_parallelism(variant, configuration, sets_simulation, &*strategy->parallelism, run);
    };
  }
  return context.variations->scenario(variation, sizing, &context.reuse);
}

namespace {

SweepRow evaluate_one(const SweepContext& context, size_t index, Tier tier, SharedCells* shared) {
  SweepRow row;
  row.index = index;
  row.tier = tier;
  try {
    const Scenario scenario = configuration_scenario(context, index);
    try {
      evaluate_scenario(scenario, tier, shared, &row);
    } catch (const SpecError& error) {
      throw locate_spec_error(scenario, scenario.strategies.front(), error);
    }
  } catch (const InputError& error) {
    row = not_applicable_row(index, tier, error);
  } catch (const std::invalid_argument& error) {  // a collective schedule that does not fit the group
    row = not_applicable_row(index, tier, error);
  }
  return row;
}

}  // namespace

void fill_closed_form_row(const ClosedFormStepEstimate& estimate, const Cluster& cluster, const ParallelismOptions& p,
                          int64_t batch_size, SweepRow* row) {
  row->step_seconds = estimate.step_seconds;
  row->samples_per_second = static_cast<double>(batch_size * p.data) / estimate.step_seconds;
  row->tasks = estimate.cell_plan_tasks;
  double slots = 0;
  for (size_t s = 0; s < estimate.forward_slot_seconds.size(); ++s) {
    slots = std::max(slots, static_cast<double>(p.micro_batches) *
                                (estimate.forward_slot_seconds[s] + estimate.backward_slot_seconds[s]));
  }
  split_step_time(estimate.step_seconds, slots, 0, 0, estimate.step_seconds - slots, row);
  for (size_t s = 0; s < estimate.stage_peak_memory.size(); ++s) {
    if (estimate.stage_peak_memory[s].total() > row->peak_memory_bytes) {
      row->peak_memory_bytes = estimate.stage_peak_memory[s].total();
      row->memory_capacity_bytes = estimate.stage_memory_capacity_bytes[s];
    }
  }
  const auto [verdict, stages_over] = worst_out_of_memory_verdict(estimate, cluster, p);
  if (stages_over > 0) {
    row->status = RowStatus::kOutOfMemory;
    row->reason = verdict;
    if (stages_over > 1) row->reason += " (and " + std::to_string(stages_over - 1) + " more stages)";
  }
}

SweepRow not_applicable_row(size_t index, Tier tier, const std::exception& error) {
  SweepRow row;
  row.index = index;
  row.tier = tier;
  row.status = RowStatus::kNotApplicable;
  const auto* input = dynamic_cast<const InputError*>(&error);
  row.reason = input ? without_file(*input) : error.what();
  return row;
}

SweepRow evaluate_configuration(const SweepContext& context, size_t index, Tier tier) {
  SharedCells none;
  return evaluate_one(context, index, tier, &none);
}

std::vector<size_t> configurations_sharing_cells(const SweepContext& context, size_t index, Tier tier) {
  if (tier == Tier::kSearch) {
    const std::string& key = context.screen_keys.at(index);
    return key.empty() ? std::vector<size_t>{index} : context.screen_groups.at(key);
  }
  const std::string& key = context.cell_keys.at(index);
  if (tier != Tier::kAnalytical || key.empty()) return {index};
  return context.cell_groups.at(key);
}

std::vector<size_t> work_items(const SweepContext& context, const std::vector<size_t>& indices, Tier tier) {
  std::vector<bool> grouped(context.spec.configurations.size(), false);
  std::vector<size_t> leaders;
  for (size_t index : indices) {
    if (grouped.at(index)) continue;
    leaders.push_back(index);
    for (size_t member : configurations_sharing_cells(context, index, tier)) grouped[member] = true;
  }
  return leaders;
}

std::vector<SweepRow> evaluate_configurations(const SweepContext& context, const std::vector<size_t>& indices,
                                              Tier tier) {
  std::vector<SweepRow> rows;
  std::map<std::string, SharedCells> shared;  // by cell key ("": a configuration's own)
  for (size_t index : indices) {
    const std::string& key = context.cell_keys.at(index);
    SharedCells own;
    rows.push_back(evaluate_one(context, index, tier, key.empty() ? &own : &shared[key]));
  }
  return rows;
}

}  // namespace placesim
