// `placesim run SCENARIO`: place, plan, simulate and report one scenario.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/pipeline.h"
#include "sim/placement/placement_log.h"
#include "sim/report/text_report.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

struct RunCommandOptions {
  std::string scenario;
  OutputOptions outputs;
  bool log_placement = false;
  bool quiet = false;
};

int run(const RunCommandOptions& options, const GlobalOptions& global) {
  HardwareCatalog catalog = global.catalog();
  Scenario scenario = load_scenario(options.scenario, catalog);
  std::string trace = output_path(options.outputs.trace, "--trace", scenario.trace_path, options.scenario, "/outputs/trace");
  std::string report =
      output_path(options.outputs.report, "--report", scenario.report_path, options.scenario, "/outputs/report");
  PlannedScenario planned = plan_scenario(scenario);
  if (!options.quiet) {
    std::cout << "Scenario: " << scenario.name;
    if (!scenario.description.empty()) std::cout << " - " << scenario.description;
    std::cout << "\nModel: " << scenario.graph.name() << " (" << scenario.graph.size() << " ops), "
              << (scenario.run.kind == StepKind::kTraining ? "training" : "inference") << ", batch "
              << scenario.run.batch_size << ", " << to_string(scenario.run.precision) << "; cluster: "
              << scenario.cluster.name << " (" << scenario.cluster.devices().size() << " devices); plan: "
              << planned.plan.tasks.size() << " tasks\n\n";
  }
  for (const auto& note : planned.placement.notes) std::cerr << "placesim: " << note << "\n";
  if (options.log_placement || (scenario.run.log_device_placement && !options.quiet)) {
    std::cout << placement_log(scenario.graph, scenario.cluster, planned.placement) << "\n";
  }
  SimulatedRun simulated = simulate_plan(planned.plan, scenario.cluster);
  if (!options.quiet) std::cout << text_report(planned.plan, scenario.cluster, simulated.metrics);
  write_outputs(scenario.name, planned.plan, scenario.cluster, simulated, trace, report);
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
  add_output_options(command, &options->outputs);
  return {command, [options, &global] { return run(*options, global); }};
}

}  // namespace placesim
