// `placesim compare PREDICTED MEASURED`: step time, worst tasks and per-op-kind error between
// two reports of the same plan; -o writes the comparison as JSON and a per-task CSV beside it.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "real_backend/compare.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"

namespace placesim {

Command add_compare_command(CLI::App& app, const GlobalOptions&) {
  struct Options {
    std::string predicted, measured, output;
    size_t worst = 10;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command =
      app.add_subcommand("compare", "Compare a predicted report with a measured one (from run/execute --report)");
  command->add_option("predicted", options->predicted, "Report JSON of the prediction (placesim run --report)")
      ->required();
  command->add_option("measured", options->measured, "Report JSON of the measurement (placesim execute --report)")
      ->required();
  command->add_option("-o,--output", options->output,
                      "Write the comparison to this JSON file, and every task's error to the same name with .csv");
  command->add_option("--worst", options->worst, "How many tasks to list by absolute error")->capture_default_str();
  return {command, [options] {
            std::filesystem::path json_path = options->output;
            std::filesystem::path csv_path = std::filesystem::path(options->output).replace_extension(".csv");
            if (!options->output.empty() && json_path.extension() != ".json") {
              throw InputError("--output", "", "expected a .json file name, got \"" + options->output + "\"");
            }
            output_path(options->output, "--output", "", "", "");
            if (!options->output.empty()) output_path(csv_path.string(), "--output", "", "", "");
            real::Comparison comparison =
                real::compare_reports(parse_json_file(options->predicted), options->predicted,
                                      parse_json_file(options->measured), options->measured);
            std::cout << real::comparison_text(comparison, options->worst);
            if (!options->output.empty()) {
              write_file_atomically(csv_path, real::comparison_csv(comparison));
              write_file_atomically(json_path, real::comparison_json(comparison, options->worst).dump(2) + "\n");
            }
            return 0;
          }};
}

}  // namespace placesim
