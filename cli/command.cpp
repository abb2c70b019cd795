#include "cli/command.h"

#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"

namespace placesim {

void add_output_options(CLI::App* command, OutputOptions* outputs) {
  command->add_option("--trace", outputs->trace,
                      "Write the timeline as a Chrome trace-event JSON file (open it in ui.perfetto.dev; - for "
                      "standard output)");
  command->add_option("--report", outputs->report,
                      "Write every metric as JSON (schema: docs/report-format.md; - for standard output, then "
                      "without the text report)");
}

bool outputs_take_standard_output(const OutputOptions& outputs) {
  const bool trace = is_standard_output(outputs.trace), report = is_standard_output(outputs.report);
  if (trace && report) throw InputError("--trace", "", "the report already goes to standard output; write the trace to a file");
  return trace || report;
}

std::string output_path(const std::string& flag_value, const std::string& flag, const std::string& scenario_value,
                        const std::string& scenario_file, const std::string& json_path) {
  const std::string& output = flag_value.empty() ? scenario_value : flag_value;
  if (output.empty()) return output;
  std::string problem = output_path_problem(output);
  if (problem.empty()) return output;
  std::string message = "cannot write \"" + output + "\": " + problem;
  if (flag_value.empty()) throw InputError(scenario_file, json_path, message);
  throw InputError(flag, "", message);
}

const Strategy& strategy_named(const Scenario& scenario, const std::string& name) {
  for (const Strategy& strategy : scenario.strategies) {
    if (strategy.name == name) return strategy;
  }
  std::string names;
  for (const Strategy& strategy : scenario.strategies) names += (names.empty() ? "" : ", ") + strategy.name;
  throw InputError("--strategy", "", "no strategy named \"" + name + "\" (the scenario has: " + names + ")");
}

}  // namespace placesim
