// `placesim validate PATH...`: without --backend, every strategy with a `published` figure is
// predicted and compared with it (directories are searched for scenarios); with --backend
// cpu|cuda, each scenario is predicted (SimGrid), executed on this machine and compared. Both end
// with the mean absolute percentage error, "MAPE: N.N% over K cases".
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/backend_options.h"
#include "sim/session/collective_validation.h"
#include "sim/session/published_validation.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"

namespace placesim {

Command add_validate_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::vector<std::string> scenarios;
    BackendOptions backend;
    std::string output_directory;
    bool details = false;
    bool scaling = false;
    bool collectives = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "validate",
      "Compare predictions with published figures (scenario files or directories), or with --backend, with "
      "measurements on this machine; ends with the MAPE line");
  command->add_option("scenarios", options->scenarios, "Scenario files or directories (plans too, with --backend)");
  add_backend_options(command, &options->backend);
  command->add_option("--output-dir", options->output_directory,
                      "Write NAME.comparison.json and NAME.comparison.csv per case into this directory");
  command->add_flag("--details", options->details, "Print each case's full comparison (worst tasks, op kinds)");
  command->add_flag("--scaling", options->scaling,
                    "Published figures: first print each data-parallel case's scaling efficiency against its "
                    "scenario's one-replica case, published and predicted (compute errors cancel)");
  command->add_flag("--collectives", options->collectives,
                    "Instead of scenarios: every measured nccl-tests curve a bundled cluster template names against "
                    "placesim's collective model on the template's links (no curve); mean |error| by size, with "
                    "--details every point");
  return {command, [options, &global, command] {
            if (options->collectives) {
              if (!options->scenarios.empty() || command->get_option("--backend")->count() > 0) {
                throw InputError("--collectives", "", "takes no scenarios and no --backend: it checks the bundled "
                                 "clusters' measured collective curves");
              }
              std::cout << collective_check_table(check_collective_curves(global.catalog()), options->details);
              return 0;
            }
            if (options->scenarios.empty()) {
              throw InputError("scenarios", "", "none given: name scenario files or directories (or --collectives)");
            }
            if (command->get_option("--backend")->count() == 0) {
              std::vector<PublishedCase> cases =
                  validate_published(options->scenarios, global.catalog(), !options->backend.quiet);
              if (options->scaling) std::cout << scaling_table(cases) << "\n";
              std::cout << published_table(cases);
              return 0;
            }
            if (!options->output_directory.empty() && !std::filesystem::is_directory(options->output_directory)) {
              throw InputError("--output-dir", "", "no such directory \"" + options->output_directory + "\"");
            }
            parse_backend_option(options->backend.backend);
            HardwareCatalog catalog = global.catalog();
            // Load every case first: a bad file fails before anything is measured.
            std::vector<LoadedPlan> cases;
            for (const auto& path : options->scenarios) cases.push_back(load_scenario_or_plan(path, catalog, print_note));
            std::vector<real::Comparison> comparisons;
            std::printf("%-28s %14s %14s %9s\n", "case", "predicted ms", "measured ms", "error");
            std::fflush(stdout);
            for (const LoadedPlan& loaded : cases) {
              SimulatedRun predicted = simulate_plan(loaded.plan, loaded.cluster);
              MeasuredRun run = execute_plan(loaded.plan, loaded.cluster,
                                             measured_run_options(options->backend, loaded.plan.name));
              if (!run.reporting_rank) std::exit(0);  // rank 0 compares and prints
              const SimulatedRun& measured = run.run;
              real::Comparison comparison = compare_runs(loaded.plan, loaded.cluster, predicted, measured);
              std::printf("%-28s %14.3f %14.3f %+8.1f%%\n", loaded.name.c_str(), comparison.predicted_step_seconds * 1e3,
                          comparison.measured_step_seconds * 1e3, comparison.step_relative_error() * 100);
              if (options->details) std::cout << "\n" << real::comparison_text(comparison) << "\n";
              std::fflush(stdout);
              if (!options->output_directory.empty()) {
                std::filesystem::path base = std::filesystem::path(options->output_directory) / loaded.name;
                write_file_atomically(base.string() + ".comparison.json",
                                      real::comparison_json(comparison).dump(2) + "\n");
                write_file_atomically(base.string() + ".comparison.csv", real::comparison_csv(comparison));
              }
              comparisons.push_back(std::move(comparison));
            }
            std::printf("MAPE: %.1f%% over %zu cases\n", real::mean_absolute_percentage_error(comparisons),
                        comparisons.size());
            return 0;
          }};
}

}  // namespace placesim
