// placesim: predicts how long a deep-learning training step takes on a cluster, from a scenario
// file. Exit status: 0 success, 2 bad input (the message names the file and JSON path), 1 an
// internal error.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/check_file.h"
#include "cli/pipeline.h"
#include "sim/core/atomic_file.h"
#include "sim/placement/placement_log.h"
#include "sim/plan/plan_json.h"
#include "sim/report/text_report.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

constexpr int kExitInputError = 2;

struct CommonOptions {
  std::string profiles;
  HardwareCatalog catalog() const {
    return HardwareCatalog(profiles.empty() ? HardwareCatalog::default_root() : std::filesystem::path(profiles));
  }
};

struct OutputOptions {
  std::string trace;
  std::string report;
};

void add_output_options(CLI::App* command, OutputOptions* outputs) {
  command->add_option("--trace", outputs->trace,
                      "Write the timeline as a Chrome trace-event JSON file (open it in ui.perfetto.dev)");
  command->add_option("--report", outputs->report, "Write every metric as JSON (schema: docs/report-format.md)");
}

// The output path to use: the flag's, else the scenario's. Fails before any work is done when its
// directory is missing, so that a long simulation does not end in an error, nor write one output
// and not the other.
std::string output_path(const std::string& flag_value, const std::string& flag, const std::string& scenario_value,
                        const std::string& scenario_file, const std::string& json_path) {
  const std::string& output = flag_value.empty() ? scenario_value : flag_value;
  std::filesystem::path directory = std::filesystem::path(output).parent_path();
  std::error_code error;
  if (output.empty() || directory.empty() || std::filesystem::is_directory(directory, error)) return output;
  std::string message = "cannot write \"" + output + "\": no such directory \"" + directory.string() + "\"";
  if (flag_value.empty()) throw InputError(scenario_file, json_path, message);
  throw InputError(flag, "", message);
}

int run_command(const std::string& scenario_path, const CommonOptions& common, const OutputOptions& outputs,
                bool force_log, bool quiet) {
  HardwareCatalog catalog = common.catalog();
  Scenario scenario = load_scenario(scenario_path, catalog);
  std::string trace = output_path(outputs.trace, "--trace", scenario.trace_path, scenario_path, "/outputs/trace");
  std::string report = output_path(outputs.report, "--report", scenario.report_path, scenario_path, "/outputs/report");
  PlannedScenario planned = plan_scenario(scenario);
  if (!quiet) {
    std::cout << "Scenario: " << scenario.name;
    if (!scenario.description.empty()) std::cout << " - " << scenario.description;
    std::cout << "\nModel: " << scenario.graph.name() << " (" << scenario.graph.size() << " ops), "
              << (scenario.run.kind == StepKind::kTraining ? "training" : "inference") << ", batch "
              << scenario.run.batch_size << ", " << to_string(scenario.run.precision) << "; cluster: "
              << scenario.cluster.name << " (" << scenario.cluster.devices().size() << " devices); plan: "
              << planned.plan.tasks.size() << " tasks\n\n";
  }
  for (const auto& note : planned.placement.notes) std::cerr << "placesim: " << note << "\n";
  if (scenario.run.log_device_placement || force_log) {
    std::cout << placement_log(scenario.graph, scenario.cluster, planned.placement) << "\n";
  }
  SimulatedRun run = simulate_plan(planned.plan, scenario.cluster);
  if (!quiet) std::cout << text_report(planned.plan, scenario.cluster, run.metrics);
  write_outputs(scenario.name, planned.plan, scenario.cluster, run, trace, report);
  return 0;
}

int plan_command(const std::string& scenario_path, const std::string& output, const CommonOptions& common) {
  HardwareCatalog catalog = common.catalog();
  Scenario scenario = load_scenario(scenario_path, catalog);
  PlannedScenario planned = plan_scenario(scenario);
  std::string text = write_plan_json(planned.plan, scenario.cluster).dump(1) + "\n";
  if (output.empty() || output == "-") {
    std::cout << text;
  } else {
    write_file_atomically(output, text);
    std::cerr << "placesim: wrote " << planned.plan.tasks.size() << " tasks to " << output << "\n";
  }
  return 0;
}

int simulate_command(const std::string& plan_path, const OutputOptions& outputs, bool quiet) {
  output_path(outputs.trace, "--trace", "", "", "");
  output_path(outputs.report, "--report", "", "", "");
  PlanFile file = load_plan_file(plan_path);
  SimulatedRun run = simulate_plan(file.plan, file.cluster);
  if (!quiet) {
    std::cout << "Plan: " << file.plan.name << " (" << file.plan.tasks.size() << " tasks on "
              << file.cluster.devices().size() << " devices)\n\n"
              << text_report(file.plan, file.cluster, run.metrics);
  }
  write_outputs(file.plan.name, file.plan, file.cluster, run, outputs.trace, outputs.report);
  return 0;
}

int check_command(const std::vector<std::string>& files, const std::string& kind, const CommonOptions& common) {
  HardwareCatalog catalog = common.catalog();
  int status = 0;
  for (const auto& file : files) {
    try {
      // Check before printing: "FILE: OK: " must not precede the error of a bad file.
      std::string summary = check_file(file, kind, catalog);
      std::cout << file << ": OK: " << summary << "\n";
    } catch (const InputError& error) {
      std::cerr << "error: " << error.what() << "\n";
      status = kExitInputError;
    }
  }
  return status;
}

int main_with_errors_handled(int argc, char** argv) {
  CLI::App app{
      "placesim predicts how fast a deep-learning training step runs on a cluster of CPUs, GPUs and TPUs.\n"
      "A scenario file names a model, a cluster and a strategy; see docs/scenario-format.md.",
      "placesim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "placesim 0.1.0");
  CommonOptions common;
  app.add_option("--profiles", common.profiles,
                 "Hardware profile directory (default: $PLACESIM_PROFILES or the bundled hardware_profiles/)");

  std::string scenario_path, plan_path, output;
  OutputOptions outputs;
  bool log_placement = false, quiet = false;

  CLI::App* run = app.add_subcommand("run", "Place, plan and simulate a scenario; print the predicted step time");
  run->add_option("scenario", scenario_path, "Scenario JSON file")->required();
  run->add_flag("--log-device-placement", log_placement,
                "Print TensorFlow's placement log even if the scenario does not ask for it");
  run->add_flag("-q,--quiet", quiet, "Print nothing but errors (outputs are still written)");
  add_output_options(run, &outputs);

  std::vector<std::string> check_files;
  std::string check_kind = "auto";
  CLI::App* check = app.add_subcommand(
      "check", "Validate scenario, model, device profile, links, cluster or plan files; explain every error");
  check->add_option("files", check_files, "Files to check")->required();
  check->add_option("--kind", check_kind, "What the files are (default: detect)")
      ->check(CLI::IsMember({"auto", "scenario", "model", "device", "links", "cluster", "plan"}));

  CLI::App* plan = app.add_subcommand("plan", "Write a scenario's execution plan (tasks, deps, costs, cluster) as JSON");
  plan->add_option("scenario", scenario_path, "Scenario JSON file")->required();
  plan->add_option("-o,--output", output, "Plan file to write (default: standard output)");

  CLI::App* simulate = app.add_subcommand("simulate", "Simulate a plan file written by `placesim plan` (or by hand)");
  simulate->add_option("plan", plan_path, "Plan JSON file")->required();
  simulate->add_flag("-q,--quiet", quiet, "Print nothing but errors");
  add_output_options(simulate, &outputs);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int status = app.exit(error);
    return status == 0 ? 0 : kExitInputError;
  }
  if (run->parsed()) return run_command(scenario_path, common, outputs, log_placement, quiet);
  if (check->parsed()) return check_command(check_files, check_kind, common);
  if (plan->parsed()) return plan_command(scenario_path, output, common);
  if (simulate->parsed()) return simulate_command(plan_path, outputs, quiet);
  return kExitInputError;
}

}  // namespace
}  // namespace placesim

int main(int argc, char** argv) {
  try {
    return placesim::main_with_errors_handled(argc, argv);
  } catch (const placesim::InputError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return placesim::kExitInputError;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory (the input is too large for this machine)\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "internal error: " << error.what() << "\n";
    return 1;
  }
}
