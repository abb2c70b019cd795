// `placesim run SCENARIO`: place, plan, simulate and report one scenario.
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "sim/session/automatic_stages.h"
#include "sim/session/closed_form_report.h"
#include "sim/session/pipeline.h"
#include "sim/session/tier_step.h"
#include "sim/core/atomic_file.h"
#include "sim/placement/placement_log.h"
#include "sim/report/cost_provenance.h"
#include "sim/report/text_report.h"
#include "sim/core/units_format.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

struct RunCommandOptions {
  std::string scenario;
  OutputOptions outputs;
  std::string strategy;
  bool log_placement = false;
  bool quiet = false;
  bool allow_oom = false;
  bool json = false;  ///< --json: the report on standard output, nothing else there
};

void print_header(const Scenario& scenario, size_t tasks) {
  std::cout << "Scenario: " << scenario.name;
  if (!scenario.description.empty()) std::cout << " - " << scenario.description;
  std::cout << "\nModel: " << scenario.graph.name() << " (" << scenario.graph.size() << " ops), "
            << (scenario.run.kind == StepKind::kTraining ? "training" : "inference") << ", batch "
            << scenario.run.batch_size
            << (scenario.strategies.front().data_parallel || scenario.strategies.front().parallelism ? " per replica" : "")
            << ", "
            << to_string(scenario.run.precision) << "; cluster: " << scenario.cluster.name << " ("
            << scenario.cluster.devices().size() << " devices); plan: " << tasks << " tasks\n\n";
}

// A strategy that does not fit in memory is an input error, not a prediction (issue 5), on every
// tier, unless --allow-oom.
void refuse_out_of_memory(const RunCommandOptions& options, const std::vector<Strategy>& strategies,
                          const std::vector<TierStep>& steps) {
  if (options.allow_oom) return;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].out_of_memory.empty()) continue;
    throw out_of_memory_error(options.scenario, strategies.size() > 1 ? strategies[i].name : "", steps[i].out_of_memory);
  }
}

// The closed-form tier (sim/analytical/pipeline_closed_form.h): each 3D strategy's step from one
// micro-batch's cells, no plan of the step, so no timeline, devices table or trace; the report
// is sim/session/closed_form_report.h's.
int run_closed_form(const RunCommandOptions& options, const Scenario& scenario, const std::vector<Strategy>& strategies,
                    const std::string& trace, const std::string& report) {
  std::vector<TierStep> steps;
  for (const Strategy& strategy : strategies) steps.push_back(evaluate_on_tier(scenario, strategy, false));
  if (!trace.empty()) {
    throw InputError("--trace", "", "the closed-form tier (\"simulation\": {\"tier\": \"closed-form\"}) computes no "
                                    "timeline; use \"analytical\" or \"simulated\" for a trace");
  }
  refuse_out_of_memory(options, strategies, steps);
  Json rows = Json::array();
  for (size_t i = 0; i < strategies.size(); ++i) {
    const Strategy& strategy = strategies[i];
    const ParallelismOptions& p = *strategy.parallelism;
    const Cluster& cluster = scenario.cluster_for(strategy);
    const ClosedFormStepEstimate& estimate = *steps[i].closed_form;
    const double samples = static_cast<double>(scenario.run.batch_size * p.data);
    const TrainingEfficiency efficiency = training_efficiency(scenario, strategy, samples / estimate.step_seconds);
    rows.push_back(closed_form_strategy_json(strategy, cluster, estimate, samples, &efficiency));
    if (options.quiet) continue;
    size_t width = 34;
    for (int64_t s = 0; s < p.pipeline; ++s) width = std::max(width, cluster.device(p.device(0, s, 0)).name.canonical().size());
    std::cout << (strategies.size() > 1 ? "Strategy " + strategy.name + ": " : std::string("")) << "data " << p.data
              << " x pipeline " << p.pipeline
              << (p.context > 1 ? " x context " + std::to_string(p.context) : std::string()) << " x tensor " << p.tensor
              << (p.expert > 1 ? ", experts over groups of " + std::to_string(p.expert) + " replicas" : std::string())
              << ", " << p.micro_batches
              << " micro-batches"
              << (p.virtual_stages > 1 ? ", interleaved 1F1B with " + std::to_string(p.virtual_stages) + " virtual stages"
                                       : std::string())
              << "\n"
              << "Predicted step time: " << format_seconds(estimate.step_seconds)
              << " (closed-form tier: the analytical tier's list schedule, from one micro-batch's "
              << estimate.cell_plan_tasks << " tasks)\n"
              << "Throughput: " << format_rate(samples / estimate.step_seconds, "samples") << " (" << samples
              << " samples per step)\n"
              << lockstep_text(estimate.lockstep_gemm_factor, estimate.lockstep_gpus)
              << efficiency_text(efficiency) << "\n"
              << pad("Stage", 5, true) << "  " << pad("device (replica 0, tensor rank 0)", width, true)
              << "  forward slot  backward slot  last task ends  in flight  peak memory / capacity\n";
    for (size_t s = 0; s < estimate.forward_slot_seconds.size(); ++s) {
      const double peak = estimate.stage_peak_memory[s].total(), capacity = estimate.stage_memory_capacity_bytes[s];
      std::cout << pad(std::to_string(s), 5) << "  "
                << pad(cluster.device(p.device(0, static_cast<int64_t>(s), 0)).name.canonical(), width, true) << "  "
                << pad(format_seconds(estimate.forward_slot_seconds[s]), 12) << "  "
                << pad(format_seconds(estimate.backward_slot_seconds[s]), 13) << "  "
                << pad(format_seconds(estimate.stage_end_seconds[s]), 14) << "  "
                << pad(std::to_string(estimate.stage_micro_batches_in_flight[s]), 9) << "  " << format_bytes(peak) << " / "
                << format_bytes(capacity) << (peak > capacity ? "  OUT OF MEMORY" : "") << "\n";
    }
    for (const std::string& verdict : steps[i].out_of_memory) std::cout << "OUT OF MEMORY: " << verdict << "\n";
    std::cout << "\n";
  }
  // Where the costs come from, as the other tiers print it: from the graph's ops, as there is no plan.
  const std::vector<CostSource> sources = cost_sources(scenario.cluster_for(strategies.front()), scenario.run.precision,
                                                       graph_kernels(scenario.graph, scenario.run.memory_format));
  if (!options.quiet) std::cout << cost_sources_text(sources);
  if (!report.empty()) {
    Json document = closed_form_report(scenario.name, rows);
    document["compute_costs"] = cost_sources_json(sources);
    write_file_atomically(report, document.dump(2) + "\n");
  }
  return 0;
}

int run(RunCommandOptions options, const GlobalOptions& global) {
  if (options.json) {
    if (!options.outputs.report.empty() && !is_standard_output(options.outputs.report)) {
      throw InputError("--json", "", "prints the report on standard output; it is not combined with --report FILE");
    }
    options.outputs.report = "-";
  }
  HardwareCatalog catalog = global.catalog();
  // A strategy given by name is resolved alone (an unknown name: none is).
  Scenario scenario = load_scenario_to_plan(options.scenario, catalog, options.strategy);
  std::vector<Strategy> strategies = scenario.strategies;
  if (!options.strategy.empty()) strategies = {strategy_named(scenario, options.strategy)};
  bool outside = options.outputs.allow_outside_outputs;
  std::string trace = output_path(
      options.outputs.trace, "--trace",
      options.outputs.trace.empty() ? scenario_output_path(scenario.trace_path, options.scenario, "/outputs/trace", outside) : "",
      options.scenario, "/outputs/trace");
  std::string report = output_path(
      options.outputs.report, "--report",
      options.outputs.report.empty() ? scenario_output_path(scenario.report_path, options.scenario, "/outputs/report", outside) : "",
      options.scenario, "/outputs/report");
  if (strategies.size() > 1 && !trace.empty()) {
    std::string names;
    for (const Strategy& s : strategies) names += (names.empty() ? "" : ", ") + s.name;
    throw InputError("--trace", "", "the scenario has " + std::to_string(strategies.size()) + " strategies (" + names +
                                        "): choose one with --strategy NAME to write its trace");
  }
  if (is_standard_output(trace) && is_standard_output(report)) {
    throw InputError("--trace", "", "the report already goes to standard output; write the trace to a file");
  }
  // A report or trace on standard output is the whole of standard output: no text beside it.
  const bool stdout_taken = is_standard_output(trace) || is_standard_output(report);
  if (stdout_taken) options.quiet = true;

  if (scenario.run.tier == Tier::kClosedForm) return run_closed_form(options, scenario, strategies, trace, report);

  std::vector<TierStep> steps;
  for (size_t i = 0; i < strategies.size(); ++i) {
    if (strategies.size() > 1 && !options.quiet) {
      std::cerr << "placesim: simulating strategy " << (i + 1) << "/" << strategies.size() << ": " << strategies[i].name
                << "\n";
    }
    steps.push_back(evaluate_on_tier(scenario, strategies[i], has_scaling_baseline(strategies[i])));
  }
  refuse_out_of_memory(options, strategies, steps);
  std::vector<EvaluatedStrategy> evaluated;
  for (TierStep& step : steps) evaluated.push_back(std::move(*step.planned));
  const EvaluatedStrategy& first = evaluated.front();
  if (!options.quiet) print_header(scenario, first.planned.plan.tasks.size());
  for (const auto& note : first.planned.placement.notes) std::cerr << "placesim: " << note << "\n";
  if (options.log_placement || (scenario.run.log_device_placement && !options.quiet)) {
    (stdout_taken ? std::cerr : std::cout) << strategy_placement_log(scenario, strategies.front(), first.planned.placement)
                                           << "\n";
  }
  if (!options.quiet) {
    if (strategies.size() == 1) {
      for (const auto& note : first.planned.notes) std::cout << "Plan: " << note << "\n";
      if (!first.planned.notes.empty()) std::cout << "\n";
      std::cout << text_report(first.planned.plan, scenario.cluster_for(strategies.front()), first.run.metrics, 12,
                               TimelineOrigin::kPredicted, first.result.efficiency ? &*first.result.efficiency : nullptr);
      if (first.pipeline) std::cout << "\n" << pipeline_text(*first.pipeline, scenario.cluster_for(strategies.front()));
    }
    if (strategies.size() > 1 || has_scaling_baseline(strategies.front())) {
      std::vector<StrategyResult> results;
      for (const auto& e : evaluated) results.push_back(e.result);
      std::cout << (strategies.size() > 1 ? "" : "\n") << "Strategies (" << scenario.run.batch_size
                << " samples per replica per step):\n"
                << comparison_table(results, "samples");
      if (strategies.size() > 1) {
        for (size_t i = 0; i < evaluated.size(); ++i) {
          std::cout << "\n" << strategies[i].name << ": " << evaluated[i].result.description << "\n";
          for (const auto& note : evaluated[i].planned.notes) std::cout << "  " << note << "\n";
          if (const auto& bottleneck = evaluated[i].result.data_parallel.bottleneck; bottleneck && strategies[i].data_parallel &&
                                                                                     strategies[i].data_parallel->replicas.size() > 1) {
            std::cout << "  " << bottleneck_text(*bottleneck) << "\n";
          }
          if (evaluated[i].pipeline) std::cout << pipeline_text(*evaluated[i].pipeline, scenario.cluster_for(strategies[i]));
          std::cout << collective_bandwidth_text(evaluated[i].run.metrics.collective_bandwidth);
        }
        std::cout << "\n"
                  << cost_sources_text(plan_cost_sources(scenario.cluster_for(strategies.front()),
                                                         evaluated.front().planned.plan));
      }
    }
  }
  if (strategies.size() == 1) {
    write_outputs(scenario.name, first.planned.plan, scenario.cluster_for(strategies.front()), first.run, trace, report,
                  &first.result.data_parallel, first.pipeline ? &*first.pipeline : nullptr,
                  first.result.efficiency ? &*first.result.efficiency : nullptr);
  } else if (!report.empty()) {
    std::vector<StrategyResult> results;
    for (const auto& e : evaluated) results.push_back(e.result);
    Json comparison = comparison_json(scenario.name, results);
    comparison["compute_costs"] =
        cost_sources_json(plan_cost_sources(scenario.cluster_for(strategies.front()), evaluated.front().planned.plan));
    for (size_t i = 0; i < evaluated.size(); ++i) {
      if (evaluated[i].pipeline && strategies[i].parallelism) {
        comparison["strategies"][i]["pipeline"] = pipeline_json(*evaluated[i].pipeline, scenario.cluster_for(strategies[i]));
      }
    }
    write_file_atomically(report, comparison.dump(2) + "\n");
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* command = app.add_subcommand("run", "Place, plan and simulate a scenario; print the predicted step time");
  command->add_option("scenario", options->scenario, "Scenario JSON file")->required();
  command->add_flag("--log-device-placement", options->log_placement,
                    "Print TensorFlow's placement log (also when the scenario does not ask for it, or with -q)");
  command->add_flag("-q,--quiet", options->quiet, "Print nothing but errors (outputs are still written)");
  command->add_option("--strategy", options->strategy, "Run only the strategy with this name");
  command->add_flag("--allow-oom", options->allow_oom,
                    "Report a placement that does not fit in memory (OUT OF MEMORY) instead of failing with exit 2");
  add_output_options(command, &options->outputs);
  command->add_flag("--json", options->json,
                    "Print the JSON report (docs/report-format.md) on standard output and nothing else there; "
                    "the same as --report -");
  command->add_flag("--allow-outside-outputs", options->outputs.allow_outside_outputs,
                    "Let the scenario's \"outputs\" write outside the scenario's directory (absolute paths, ..)");
  return {command, [options, &global] { return run(*options, global); }};
}

}  // namespace placesim
