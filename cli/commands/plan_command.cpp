// `placesim plan SCENARIO -o plan.json`: write the execution plan with its resolved cluster.
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "sim/session/automatic_stages.h"
#include "sim/session/pipeline.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/plan/plan_json.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {

Command add_plan_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string scenario;
    std::string output;
    std::string strategy;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command =
      app.add_subcommand("plan", "Write a scenario's execution plan (tasks, deps, costs, cluster) as JSON");
  command->add_option("scenario", options->scenario, "Scenario JSON file")->required();
  command->add_option("-o,--output", options->output, "Plan file to write (default: standard output)");
  command->add_option("--strategy", options->strategy, "The strategy with this name (default: the scenario's first)");
  return {command, [options, &global] {
            output_path(options->output, "--output", "", "", "");
            // Only the strategy planned is resolved (an unknown name: none is, and is refused).
            Scenario scenario = load_scenario(options->scenario, global.catalog());
            const std::string name = options->strategy.empty() ? scenario.strategies.front().name : options->strategy;
            resolve_automatic_stages(&scenario, name);
            const Strategy& strategy = strategy_named(scenario, name);
            PlannedScenario planned = plan_strategy(scenario, strategy);
            if (planned.plan.symmetry.active()) {
              throw InputError(options->scenario, "/simulation/symmetry",
                               "a plan simulated with symmetry leaves out the mirrored devices' tasks, so it is not "
                               "written as a plan file; set \"symmetry\": \"off\" to write the full plan");
            }
            std::string text = write_plan_json(planned.plan, scenario.cluster_for(strategy)).dump(1) + "\n";
            if (options->output.empty() || is_standard_output(options->output)) {
              std::cout << text;
            } else {
              write_file_atomically(options->output, text);
              std::cerr << "placesim: wrote " << planned.plan.tasks.size() << " tasks to " << options->output << "\n";
            }
            return 0;
          }};
}

}  // namespace placesim
