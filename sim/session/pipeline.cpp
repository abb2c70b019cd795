#include "sim/session/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "sim/analytical/analytical_engine.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/engine/engine_factory.h"
#include "sim/engine/simgrid_engine.h"
#include "sim/graph/model_flops.h"
#include "sim/auto_placement/auto_placer.h"
#include "sim/placement/placement_log.h"
#include "sim/plan/collective_schedule.h"
#include "sim/planner/data_parallel_builder.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/pipeline_builder.h"
#include "sim/planner/plan_builder.h"
#include "sim/report/data_parallel_metrics.h"
#include "sim/report/json_report.h"
#include "sim/report/memory_verdict.h"
#include "sim/scenario/spec_error_location.h"
#include "sim/spec/parallelism_sizes.h"
#include "sim/timeline/chrome_trace.h"

namespace placesim {

namespace {
// Says how the engine will run the plan's all-reduces when the choice matters (ring or
// hierarchical over more than two devices).
std::string fidelity_note(const ExecutionPlan& plan) {
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.group.size() < 3) continue;
    if (!is_ring(task.algorithm) && task.algorithm != CollectiveAlgorithm::kHierarchical) continue;
    return plan.collective_fidelity == CollectiveFidelity::kPerPhase
               ? "all-reduces simulated per phase (one flow per ring hop and phase, latency per round; "
                 "\"simulation\": {\"collectives\": \"per-round\"} runs every round)"
               : "all-reduces simulated per round (every transfer of every ring round)";
  }
  return "";
}

}  // namespace

Strategy single_replica_strategy(const Strategy& strategy) {
  Strategy single = strategy;
  single.chosen_by.clear();  // the baseline is no choice of the partitioner's
  if (single.parallelism) {
    // The first data replica's devices (every stage, context and tensor rank), in the default
    // order; one replica holds every expert.
    ParallelismOptions& p = *single.parallelism;
    std::vector<DeviceId> first;
    for (int64_t s = 0; s < p.pipeline; ++s) {
      for (int64_t k = 0; k < p.context; ++k) {
        for (int64_t r = 0; r < p.tensor; ++r) first.push_back(p.device(k, s, r));
      }
    }
    p.devices = std::move(first);
    p.data = 1;
    p.expert = 1;
    p.pipeline_outermost = false;
    if (!p.stage_replicas.empty()) {
      // PipeDream's replicated stages are no set of copies of one pipeline (a "15-1" is not 15
      // two-GPU pipelines): the baseline is the whole model on the first stage's tensor group,
      // its micro-batches one after another (scaling_copies: devices / tensor of it).
      p.devices.resize(static_cast<size_t>(p.tensor));
      p.pipeline = 1;
      p.stage_replicas.clear();
      p.stage_ops.clear();
      p.asynchronous = false;
      p.double_buffered = false;
      p.schedule = PipelineSchedule::kOneFOneB;
    }
  } else if (single.data_parallel) {
    single.data_parallel->replicas.resize(1);
    if (single.data_parallel->algorithm) single.data_parallel->algorithm = CollectiveAlgorithm::kRing;
  } else if (single.pipeline) {
    DataParallelOptions one;
    one.replicas = {single.pipeline->devices.front()};
    single.pipeline.reset();
    single.data_parallel = one;
  }
  return single;
}

namespace {

PlannedScenario plan_strategy_unlocated(const Scenario& scenario, const Strategy& strategy) {
  if (scenario.run.tier == Tier::kClosedForm) {  // its plan may be far too large to build
    throw InputError(scenario.file.string(), "/simulation/tier",
                     "the closed-form tier builds no plan of the step, only `placesim run`, `check` and "
                     "`validate` take it; use \"analytical\" or \"simulated\" here");
  }
  PlannedScenario planned;
  const Cluster& cluster = scenario.cluster_for(strategy);
  if (strategy.placement.automatic) {
    planned.placement = auto_place(scenario.graph, cluster, scenario.run, *strategy.placement.automatic).placement;
  } else {
    planned.placement = place_ops(scenario.graph, cluster, strategy.placement);
  }
  std::string name = scenario.strategies.size() > 1 ? scenario.name + "/" + strategy.name : scenario.name;
  if (!strategy.chosen_by.empty()) planned.notes.push_back(strategy.chosen_by);
  if (strategy.parallelism) {
    if (strategy.parallelism->automatic_stages) {
      throw std::logic_error("\"stage_replicas\": \"auto\" planned before resolve_automatic_stages");
    }
    planned.plan =
        build_parallel_3d_plan(scenario.graph, cluster, scenario.run, *strategy.parallelism, name, &planned.notes);
  } else if (strategy.pipeline) {
    planned.plan = build_pipeline_plan(scenario.graph, cluster, scenario.run, *strategy.pipeline, name, &planned.notes);
  } else if (strategy.data_parallel) {
    planned.plan =
        build_data_parallel_plan(scenario.graph, cluster, scenario.run, *strategy.data_parallel, name, &planned.notes);
  } else {
    planned.plan = build_plan(scenario.graph, planned.placement, cluster, scenario.run, name);
  }
  if (scenario.run.tier == Tier::kAnalytical) {
    planned.notes.push_back("analytical tier (\"simulation\": {\"tier\": \"analytical\"}): the plan list-scheduled "
                            "without contention, each transfer at its route's latency + bytes / bottleneck "
                            "bandwidth, each all-reduce at its algorithm's alpha-beta estimate");
  } else if (std::string fidelity = fidelity_note(planned.plan); !fidelity.empty()) {
    planned.notes.push_back(fidelity);
  }
  return planned;
}

}  // namespace

PlannedScenario plan_strategy(const Scenario& scenario, const Strategy& strategy) {
  try {
    return plan_strategy_unlocated(scenario, strategy);
  } catch (const SpecError& error) {
    throw locate_spec_error(scenario, strategy, error);
  }
}

PlannedScenario plan_scenario(const Scenario& scenario) { return plan_strategy(scenario, scenario.strategies.front()); }

SimulatedRun simulate_plan(const ExecutionPlan& plan, const Cluster& cluster) {
  SimulatedRun run;
  run.timeline = make_simgrid_engine()->simulate(plan, cluster);
  run.metrics = compute_metrics(plan, cluster, run.timeline);
  return run;
}

SimulatedRun estimate_plan(const ExecutionPlan& plan, const Cluster& cluster) {
  SimulatedRun run;
  run.timeline = estimate_step(plan, cluster).timeline;
  run.metrics = compute_metrics(plan, cluster, run.timeline);
  return run;
}

SimulatedRun run_plan(const ExecutionPlan& plan, const Cluster& cluster, Tier tier) {
  SimulatedRun run;
  run.timeline = make_engine(tier)->simulate(plan, cluster);
  run.metrics = compute_metrics(plan, cluster, run.timeline);
  return run;
}

ClosedFormStepEstimate estimate_closed_form(const Scenario& scenario, const Strategy& strategy) {
  if (!strategy.parallelism) {
    throw InputError(scenario.file.string(), "/simulation/tier",
                     "\"closed-form\" needs a \"parallelism\" strategy (tensor x pipeline x data); strategy \"" +
                         strategy.name + "\" is not one: use \"analytical\"");
  }
  try {
    return estimate_3d_step_closed_form(scenario.graph, scenario.cluster_for(strategy), scenario.run,
                                        *strategy.parallelism);
  } catch (const SpecError& error) {
    throw locate_spec_error(scenario, strategy, error);
  }
}

namespace {

/// Bytes stage `s` lacks (<= 0: it fits).
double lacking_bytes(const ClosedFormStepEstimate& estimate, size_t s) {
  return estimate.stage_peak_memory[s].total() - estimate.stage_memory_capacity_bytes[s];
}

std::string stage_verdict(const ClosedFormStepEstimate& estimate, const Cluster& cluster,
                          const ParallelismOptions& options, size_t s) {
  const std::string device = cluster.device(options.device(0, static_cast<int64_t>(s), 0)).name.local();
  return memory_verdict("stage " + std::to_string(s) + " (" + device + " and every device of the stage)",
                        estimate.stage_peak_memory[s], estimate.stage_memory_capacity_bytes[s]);
}

}  // namespace

std::vector<std::string> out_of_memory_verdicts(const ClosedFormStepEstimate& estimate, const Cluster& cluster,
                                                const ParallelismOptions& options) {
  std::vector<size_t> over;
  for (size_t s = 0; s < estimate.stage_peak_memory.size(); ++s) {
    if (lacking_bytes(estimate, s) > 0) over.push_back(s);
  }
  std::stable_sort(over.begin(), over.end(),
                   [&](size_t a, size_t b) { return lacking_bytes(estimate, a) > lacking_bytes(estimate, b); });
  std::vector<std::string> verdicts;
  for (size_t s : over) verdicts.push_back(stage_verdict(estimate, cluster, options, s));
  return verdicts;
}

std::pair<std::string, size_t> worst_out_of_memory_verdict(const ClosedFormStepEstimate& estimate, const Cluster& cluster,
                                                           const ParallelismOptions& options) {
  size_t over = 0, worst = 0;
  for (size_t s = 0; s < estimate.stage_peak_memory.size(); ++s) {
    if (lacking_bytes(estimate, s) <= 0) continue;
    // The first stage of the most lacking, as the stable sort above orders them.
    if (over == 0 || lacking_bytes(estimate, s) > lacking_bytes(estimate, worst)) worst = s;
    ++over;
  }
  if (over == 0) return {"", 0};
  return {stage_verdict(estimate, cluster, options, worst), over};
}

InputError out_of_memory_error(const std::string& file, const std::string& strategy_name,
                               const std::vector<std::string>& verdicts) {
  return InputError(file, "",
                    (strategy_name.empty() ? std::string() : "strategy \"" + strategy_name + "\": ") +
                        "does not fit in memory: " + worst_verdicts(verdicts) +
                        " (`placesim run --allow-oom` reports it anyway)");
}

namespace {

std::string describe(const Scenario& scenario, const Strategy& strategy) {
  const Cluster& cluster = scenario.cluster_for(strategy);
  if (strategy.parallelism) {
    const ParallelismOptions& p = *strategy.parallelism;
    return parallelism_sizes_text(p) +
           (p.stage_replicas.empty() ? std::string() : ", " + std::to_string(p.data) + " streams") +
           (p.expert > 1 ? ", experts over groups of " + std::to_string(p.expert) + " replicas" : std::string()) + " (" +
           (p.schedule == PipelineSchedule::kGpipe ? std::string("GPipe")
            : p.asynchronous       ? std::string(p.double_buffered ? "PipeDream-2BW, no flushes" : "PipeDream, no flushes")
            : p.virtual_stages > 1 ? "interleaved 1F1B, " + std::to_string(p.virtual_stages) + " virtual stages"
                                   : std::string("1F1B")) +
           ", " + std::to_string(p.micro_batches) + " micro-batches) on " + cluster.device(p.devices.front()).spec.name;
  }
  if (strategy.pipeline) {
    const PipelineOptions& pp = *strategy.pipeline;
    return std::string(pp.schedule == PipelineSchedule::kGpipe ? "GPipe" : "1F1B") + " pipeline, " +
           std::to_string(pp.devices.size()) + " stages x " + std::to_string(pp.micro_batches) + " micro-batches on " +
           cluster.device(pp.devices.front()).spec.name;
  }
  if (strategy.placement.automatic) {
    return to_string(strategy.placement.automatic->algorithm) + " automatic placement, " +
           std::to_string(cluster.devices().size()) + " devices";
  }
  if (!strategy.data_parallel) return "placement rules, " + std::to_string(cluster.devices().size()) + " devices";
  const DataParallelOptions& dp = *strategy.data_parallel;
  std::string text = dp.mode == SyncMode::kSync ? "sync " : "async ";
  if (dp.aggregation == Aggregation::kAllReduce) {
    text += "all-reduce (" + (dp.algorithm ? to_string(*dp.algorithm) : std::string("auto")) + ")";
  } else {
    text += std::to_string(dp.parameter_servers.size()) + " PS on " +
            to_string(*cluster.device(dp.parameter_servers.front()).name.kind) +
            (dp.local_aggregation ? " (summed per machine first)" : "");
  }
  text += ", " + std::to_string(dp.replicas.size()) + " x " + cluster.device(dp.replicas.front()).spec.name;
  if (dp.communication.framework != Framework::kLinksOnly) text += ", " + to_string(dp.communication.framework);
  if (dp.communication.transport) text += " over " + dp.communication.transport->id;
  return text;
}

}  // namespace

TrainingEfficiency training_efficiency(const Scenario& scenario, const Strategy& strategy, double samples_per_second,
                                       const RunMetrics* metrics) {
  TrainingEfficiency efficiency;
  efficiency.batch = batch_sizes(strategy, scenario.run);
  efficiency.samples_per_second = samples_per_second;
  Recomputation recomputation = Recomputation::kNone;
  if (scenario.run.recompute) recomputation = Recomputation::kFull;
  if (strategy.parallelism && !strategy.parallelism->selective_recompute.empty()) recomputation = Recomputation::kSelective;
  const ModelFlops flops = model_flops(scenario.graph, scenario.run.batch_size,
                                       scenario.run.kind == StepKind::kTraining, recomputation);
  efficiency.tokens_per_sample = flops.tokens_per_sample;
  efficiency.model_flops_per_sample = flops.model_flops_per_sample;
  efficiency.hardware_flops_per_sample = flops.hardware_flops_per_sample;

  std::vector<DeviceId> devices;
  if (strategy.parallelism) {
    devices = strategy.parallelism->devices;
  } else if (strategy.pipeline) {
    devices = strategy.pipeline->devices;
  } else if (strategy.data_parallel) {
    devices = strategy.data_parallel->replicas;
  } else if (metrics) {
    for (const DeviceMetrics& device : metrics->devices) {
      if (device.compute_tasks > 0) devices.push_back(device.device);
    }
  }
  const Cluster& cluster = scenario.cluster_for(strategy);
  efficiency.devices = static_cast<int64_t>(devices.size());
  efficiency.peak_precision = to_string(scenario.run.precision);
  for (DeviceId id : devices) efficiency.peak_flops_per_second += cluster.device(id).spec.peak_for(scenario.run.precision);
  return efficiency;
}

std::string strategy_placement_log(const Scenario& scenario, const Strategy& strategy, const Placement& placement) {
  const Cluster& cluster = scenario.cluster_for(strategy);
  const TensorFlowVersion version = scenario.run.tensorflow_version;
  if (!strategy.data_parallel) return placement_log(scenario.graph, cluster, placement, version);
  const DataParallelOptions& dp = *strategy.data_parallel;
  std::vector<std::pair<OpId, DeviceId>> shared;
  if (dp.aggregation == Aggregation::kParameterServer && !dp.parameter_servers.empty()) {
    const std::vector<size_t> server = shard_variables(scenario.graph, dp.parameter_servers.size(), dp.sharding);
    // A variable is created once: with it its colocation group (read, Assign) and the initial
    // values that feed the group, all on the variable's server.
    const OpGraph& graph = scenario.graph;
    std::vector<std::vector<OpId>> group(graph.size());  // per op: itself and the ops colocated with it, in op order
    for (OpId id = 0; id < graph.size(); ++id) {
      group[id].push_back(id);
      const std::string& anchor = graph.op(id).colocate_with;
      if (!anchor.empty() && anchor != graph.op(id).name) group[graph.find(anchor)].push_back(id);
    }
    std::vector<bool> taken(graph.size(), false);
    auto share = [&](OpId id, DeviceId device) {
      if (!taken[id]) shared.emplace_back(id, device);
      taken[id] = true;
    };
    for (OpId id = 0; id < graph.size(); ++id) {
      if (graph.op(id).kind != OpKind::kVariable || graph.op(id).parameter_count <= 0) continue;
      const DeviceId device = dp.parameter_servers[server[id]];
      for (OpId member : group[id]) {
        for (const auto& input : graph.inputs(member)) {
          if (graph.inputs(input.op).empty() && input.op != id) share(input.op, device);
        }
        share(member, device);
      }
    }
    // In creation order, as the graph makes them.
    std::sort(shared.begin(), shared.end());
  }
  const ReplicatedGraph towers = replicate_for_log(scenario.graph, dp.replicas, shared);
  return placement_log(towers.graph, cluster, towers.placement, version);
}

bool has_scaling_baseline(const Strategy& strategy) {
  return strategy.data_parallel || (strategy.parallelism && strategy.parallelism->data > 1);
}

EvaluatedStrategy evaluate_strategy(const Scenario& scenario, const Strategy& strategy, bool with_baseline) {
  EvaluatedStrategy evaluated;
  evaluated.planned = plan_strategy(scenario, strategy);
  evaluated.run = run_plan(evaluated.planned.plan, scenario.cluster_for(strategy), scenario.run.tier);
  StrategyResult& result = evaluated.result;
  result.name = strategy.name;
  result.description = describe(scenario, strategy);
  result.run = evaluated.run.metrics;
  result.replicas = batch_sizes(strategy, scenario.run).replicas;
  if (strategy.pipeline) {
    evaluated.pipeline = compute_pipeline_metrics(
        evaluated.run.metrics, strategy.pipeline->devices, strategy.pipeline->micro_batches,
        strategy.pipeline->schedule == PipelineSchedule::kGpipe ? "gpipe" : "1f1b");
  }
  if (strategy.parallelism) {
    const ParallelismOptions& p = *strategy.parallelism;
    std::vector<DeviceId> stage_devices;  // replica 0, tensor rank 0 of every stage
    for (int64_t stage = 0; stage < p.pipeline; ++stage) stage_devices.push_back(p.device(0, stage, 0));
    // PipeDream's run is one schedule of every step's micro-batches: its fill and drain once.
    evaluated.pipeline = compute_pipeline_metrics(
        evaluated.run.metrics, stage_devices, p.micro_batches * (p.asynchronous ? scenario.run.steps : 1),
        p.schedule == PipelineSchedule::kGpipe ? "gpipe"
        : p.asynchronous                       ? (p.double_buffered ? "pipedream-2bw" : "pipedream")
                                               : "1f1b",
        p.virtual_stages, p.stage_replicas);
    if (!strategy.chosen_by.empty()) {  // "stage_replicas": "auto": what the partitioner chose
      evaluated.pipeline->chosen_by = strategy.chosen_by;
      for (size_t s = 0; s < evaluated.pipeline->per_stage.size() && s < p.stage_ops.size(); ++s) {
        evaluated.pipeline->per_stage[s].ops = p.stage_ops[s];
      }
    }
    if (p.pipeline > 1) {
      evaluated.pipeline->traffic = count_stage_traffic(evaluated.planned.plan, stage_devices);
      if (p.asynchronous) {  // PipeDream's tasks are all in one schedule (step 0): per step, 1/steps of it
        evaluated.pipeline->traffic->transfers /= scenario.run.steps;
        evaluated.pipeline->traffic->bytes /= static_cast<double>(scenario.run.steps);
      }
    }
  }
  if (strategy.data_parallel) {
    result.data_parallel = compute_data_parallel_metrics(evaluated.planned.plan, evaluated.run.timeline);
    result.data_parallel.chosen_by = strategy.chosen_by;
    result.data_parallel.bottleneck =
        find_bottleneck(evaluated.planned.plan, scenario.cluster_for(strategy), evaluated.run.timeline,
                        evaluated.run.metrics, strategy.data_parallel->replicas,
                        strategy.data_parallel->aggregation == Aggregation::kParameterServer
                            ? strategy.data_parallel->parameter_servers
                            : std::vector<DeviceId>{});
    if (with_baseline) {
      const Strategy single = single_replica_strategy(strategy);
      PlannedScenario planned = plan_strategy(scenario, single);
      SimulatedRun run = run_plan(planned.plan, scenario.cluster_for(single), scenario.run.tier);
      result.single_replica_samples_per_second =
          compute_data_parallel_metrics(planned.plan, run.timeline).samples_per_second;
    }
  } else if (strategy.parallelism && strategy.parallelism->data > 1) {
    const ParallelismOptions& p = *strategy.parallelism;
    if (!p.stage_replicas.empty()) result.scaling_copies = static_cast<double>(p.device_count() / p.tensor);
    if (with_baseline) {
      const Strategy single = single_replica_strategy(strategy);
      PlannedScenario planned = plan_strategy(scenario, single);
      result.single_replica_samples_per_second =
          run_plan(planned.plan, scenario.cluster_for(single), scenario.run.tier).metrics.samples_per_second;
    }
  } else {
    result.single_replica_samples_per_second = result.run.samples_per_second;
  }
  result.efficiency = training_efficiency(scenario, strategy, result.samples_per_second(), &result.run);
  return evaluated;
}

void write_outputs(const std::string& scenario_name, const ExecutionPlan& plan, const Cluster& cluster,
                   const SimulatedRun& run, const std::string& trace_path, const std::string& report_path,
                   const DataParallelMetrics* data_parallel, const PipelineMetrics* pipeline,
                   const TrainingEfficiency* efficiency) {
  if (!trace_path.empty()) {
    write_file_atomically(trace_path, chrome_trace(plan, cluster, run.timeline).dump() + "\n");
  }
  try {
    if (!report_path.empty()) {
      Json report = json_report(scenario_name, plan, cluster, run.timeline, run.metrics);
      if (data_parallel && data_parallel->replicas > 0) report["data_parallel"] = data_parallel_json(*data_parallel);
      if (pipeline) report["pipeline"] = pipeline_json(*pipeline, cluster);
      if (efficiency) report["efficiency"] = efficiency_json(*efficiency);
      write_file_atomically(report_path, report.dump(2) + "\n");
    }
  } catch (const InputError&) {
    // All or nothing: a trace without its report is a partial output.
    std::error_code ignored;
    if (!trace_path.empty() && !is_standard_output(trace_path)) std::filesystem::remove(trace_path, ignored);
    throw;
  }
}

}  // namespace placesim
