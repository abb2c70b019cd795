// `placesim simulate PLAN`: simulate a plan file directly.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "sim/session/pipeline.h"
#include "sim/plan/plan_json.h"
#include "sim/report/text_report.h"

namespace placesim {

Command add_simulate_command(CLI::App& app, const GlobalOptions&) {
  struct Options {
    std::string plan;
    OutputOptions outputs;
    bool quiet = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("simulate", "Simulate a plan file written by `placesim plan` (or by hand)");
  command->add_option("plan", options->plan, "Plan JSON file")->required();
  command->add_flag("-q,--quiet", options->quiet, "Print nothing but errors");
  add_output_options(command, &options->outputs);
  return {command, [options] {
            output_path(options->outputs.trace, "--trace", "", "", "");
            output_path(options->outputs.report, "--report", "", "", "");
            const bool text = !options->quiet && !outputs_take_standard_output(options->outputs);
            PlanFile file = load_plan_file(options->plan);
            SimulatedRun run = simulate_plan(file.plan, file.cluster);
            if (text) {
              std::cout << "Plan: " << file.plan.name << " (" << file.plan.tasks.size() << " tasks on "
                        << file.cluster.devices().size() << " devices)\n\n"
                        << text_report(file.plan, file.cluster, run.metrics);
            }
            write_outputs(file.plan.name, file.plan, file.cluster, run, options->outputs.trace,
                          options->outputs.report);
            return 0;
          }};
}

}  // namespace placesim
