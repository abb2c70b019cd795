// `placesim converge SCENARIO`: time-to-accuracy of the scenario's data-parallel and pipelined
// strategies.
// Simulates each strategy, reads its update order from the timeline, replays it (and each
// staleness remedy) on a small generated training problem, and reports which reaches the target
// loss first (docs/convergence.md).
#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "sim/session/automatic_stages.h"
#include "sim/session/pipeline.h"
#include "sim/convergence/convergence_chart.h"
#include "sim/convergence/convergence_report.h"
#include "sim/convergence/convergence_study.h"
#include "sim/core/atomic_file.h"
#include "sim/core/units_format.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

/// PipeDream's replicated stages whose widths differ: each stage updates at its own rate. Equal
/// widths run the plain schedule (stages outermost), whose updates are one per micro-batch.
bool replicated_stages_of_unequal_widths(const ParallelismOptions& options) {
  const std::vector<int64_t>& widths = options.stage_replicas;
  return !widths.empty() && std::adjacent_find(widths.begin(), widths.end(), std::not_equal_to<>()) != widths.end();
}

struct ConvergeCommandOptions {
  std::string scenario;
  std::string output_dir;
  std::string strategy;
  bool quiet = false;
};

/// The data-parallel and pipelined strategies to study (one when --strategy names it).
std::vector<Strategy> studied_strategies(const Scenario& scenario, const ConvergeCommandOptions& options) {
  std::vector<Strategy> strategies;
  std::string names;
  for (size_t i = 0; i < scenario.strategies.size(); ++i) {
    const Strategy& strategy = scenario.strategies[i];
    names += (names.empty() ? "" : ", ") + strategy.name;
    const bool pipelined = strategy.parallelism && strategy.parallelism->pipeline > 1;
    if (!strategy.data_parallel && !pipelined) continue;
    if (!options.strategy.empty() && strategy.name != options.strategy) continue;
    strategies.push_back(strategy);
  }
  if (!options.strategy.empty() && strategies.empty()) {
    throw InputError("--strategy", "", "no data-parallel or pipelined strategy named \"" + options.strategy +
                                           "\" (the scenario has: " + names + ")");
  }
  const std::string path = scenario.strategies.size() > 1 || names.empty() ? "/strategies" : "/strategy";
  if (strategies.empty()) {
    throw InputError(options.scenario, path,
                     "converge needs a strategy with \"data_parallel\" (docs/data-parallel.md) or a \"parallelism\" "
                     "block with \"pipeline\" >= 2 (docs/pipeline-parallel.md)");
  }
  if (scenario.run.kind != StepKind::kTraining) {
    throw InputError(options.scenario, "/run/mode", "converge needs \"training\", got \"inference\"");
  }
  return strategies;
}

int run(const ConvergeCommandOptions& options, const GlobalOptions& global) {
  HardwareCatalog catalog = global.catalog();
  Scenario scenario = load_scenario_to_plan(options.scenario, catalog, options.strategy);
  std::vector<Strategy> strategies = studied_strategies(scenario, options);
  ConvergenceOptions convergence;
  convergence.seed = scenario.run.seed;
  if (scenario.convergence) convergence = *scenario.convergence;
  std::error_code error;
  std::filesystem::path output_dir = options.output_dir;
  if (!output_dir.empty() && !std::filesystem::is_directory(output_dir, error)) {
    std::filesystem::path parent = output_dir.parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
      throw InputError("--output-dir", "", "cannot create \"" + output_dir.string() + "\": no such directory \"" +
                                               parent.string() + "\"");
    }
  }

  std::vector<StrategyTimings> timings;
  for (size_t i = 0; i < strategies.size(); ++i) {
    if (!options.quiet) {
      std::cerr << "placesim: simulating strategy " << (i + 1) << "/" << strategies.size() << ": " << strategies[i].name
                << "\n";
    }
    EvaluatedStrategy evaluated = evaluate_strategy(scenario, strategies[i], false);
    const Strategy& strategy = strategies[i];
    if (strategy.parallelism && replicated_stages_of_unequal_widths(*strategy.parallelism)) {
      try {
        timings.push_back({strategy.name, extract_replicated_stage_timings(evaluated.planned.plan, evaluated.run.timeline,
                                                                            *strategy.parallelism)});
      } catch (const std::invalid_argument& no_updates) {
        size_t index = 0;
        while (index + 1 < scenario.strategies.size() && scenario.strategies[index].name != strategy.name) ++index;
        const std::string at = scenario.strategies.size() > 1 ? "/strategies/" + std::to_string(index) : "/strategy";
        throw InputError(options.scenario, at + "/parallelism/stage_replicas",
                         std::string("converge replays each replicated stage's updates, but ") + no_updates.what());
      }
    } else if (strategy.parallelism) {
      const ParallelismOptions& p = *strategy.parallelism;
      timings.push_back({strategy.name, extract_pipeline_timings(evaluated.planned.plan, evaluated.run.timeline, p.pipeline,
                                                                  p.data, p.micro_batches, p.asynchronous,
                                                                  p.double_buffered)});
    } else {
      timings.push_back({strategy.name, extract_timings(evaluated.planned.plan, evaluated.run.timeline)});
    }
  }
  if (!options.quiet) std::cerr << "placesim: replaying the update orders on the " << (convergence.problem == ProblemKind::kMlp ? "mlp" : "logistic") << " problem\n";
  ConvergenceStudy study = run_convergence_study(timings, convergence);

  if (!options.quiet) {
    std::cout << "Scenario: " << scenario.name;
    if (!scenario.description.empty()) std::cout << " - " << scenario.description;
    std::cout << "\nSimulated: " << scenario.run.steps << " steps of " << scenario.graph.name() << ", batch "
              << scenario.run.batch_size << " per replica, on " << scenario.cluster.name << "\n"
              << convergence_text(study);
  }
  if (!output_dir.empty()) {
    std::filesystem::create_directories(output_dir, error);
    if (error) throw InputError("--output-dir", "", "cannot create \"" + output_dir.string() + "\": " + error.message());
    write_file_atomically(output_dir / "convergence.json", convergence_json(scenario.name, study).dump(2) + "\n");
    write_file_atomically(output_dir / "convergence.csv", convergence_csv(study));
    write_file_atomically(output_dir / "convergence.html", convergence_html(scenario.name, study));
    if (!options.quiet) std::cerr << "placesim: wrote convergence.json, convergence.csv, convergence.html to " << output_dir.string() << "\n";
  }
  return 0;
}

}  // namespace

Command add_converge_command(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<ConvergeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "converge", "Replay the simulated update order of sync and async data parallelism on a small training problem; "
                  "report time to a target loss");
  command->add_option("scenario", options->scenario, "Scenario JSON file (its \"convergence\" block is optional)")->required();
  command->add_option("--output-dir", options->output_dir,
                      "Write convergence.json, convergence.csv and convergence.html (a chart) into this directory");
  command->add_option("--strategy", options->strategy, "Study only the data-parallel strategy with this name");
  command->add_flag("-q,--quiet", options->quiet, "Print nothing but errors (output files are still written)");
  return {command, [options, &global] { return run(*options, global); }};
}

}  // namespace placesim
