// `placesim execute SCENARIO|PLAN --backend cpu|cuda`: run the plan on this machine's devices
// and report the measured timeline exactly as `run` reports a predicted one.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/backend_options.h"
#include "sim/report/text_report.h"

namespace placesim {

Command add_execute_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string input;
    BackendOptions backend;
    OutputOptions outputs;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "execute", "Execute a scenario's plan (or a plan file) on this machine and report measured times");
  command->add_option("input", options->input, "Scenario or plan JSON file")->required();
  add_backend_options(command, &options->backend);
  add_output_options(command, &options->outputs);
  return {command, [options, &global] {
            output_path(options->outputs.trace, "--trace", "", "", "");
            output_path(options->outputs.report, "--report", "", "", "");
            const bool text = !options->backend.quiet && !outputs_take_standard_output(options->outputs);
            LoadedPlan loaded = load_scenario_or_plan(options->input, global.catalog(), print_note);
            MeasuredRun run = execute_plan(loaded.plan, loaded.cluster,
                                           measured_run_options(options->backend, loaded.plan.name));
            if (!run.reporting_rank) std::exit(0);  // rank 0 has the merged timeline and writes the outputs
            const SimulatedRun& measured = run.run;
            if (text) {
              std::cout << "Plan: " << loaded.plan.name << " (" << loaded.plan.tasks.size() << " tasks on "
                        << loaded.cluster.devices().size() << " devices), measured on " << measured.timeline.source
                        << ", median of " << options->backend.timed_runs << " runs\n\n"
                        << text_report(loaded.plan, loaded.cluster, measured.metrics, 12, TimelineOrigin::kMeasured);
            }
            write_outputs(loaded.name, loaded.plan, loaded.cluster, measured, options->outputs.trace,
                          options->outputs.report);
            return 0;
          }};
}

}  // namespace placesim
