// What every subcommand of `placesim` shares: global options, output flags, and the way a
// subcommand registers itself (one file per subcommand under cli/commands/).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/cluster/hardware_catalog.h"
#include "sim/scenario/scenario.h"

namespace placesim {

constexpr int kExitInputError = 2;

/// Options given before the subcommand.
struct GlobalOptions {
  std::string profiles;
  HardwareCatalog catalog() const {
    return HardwareCatalog(profiles.empty() ? HardwareCatalog::default_root() : std::filesystem::path(profiles));
  }
};

/// --trace and --report, shared by the commands that simulate.
struct OutputOptions {
  std::string trace;
  std::string report;
  bool allow_outside_outputs = false;  ///< run: the scenario's `outputs` may leave its directory
};
void add_output_options(CLI::App* command, OutputOptions* outputs);

/// True when --trace or --report is "-" (or /dev/stdout): the JSON is then the whole of standard
/// output and the command prints no text there. Both on standard output is an InputError.
bool outputs_take_standard_output(const OutputOptions& outputs);

/// The output path to use: the flag's, else the scenario's. Fails before any work is done when
/// its directory is missing, so a long simulation never ends in an error or a partial output.
std::string output_path(const std::string& flag_value, const std::string& flag, const std::string& scenario_value,
                        const std::string& scenario_file, const std::string& json_path);

/// The scenario's strategy called `name` (--strategy); an InputError naming the others if none is.
const Strategy& strategy_named(const Scenario& scenario, const std::string& name);

/// A registered subcommand: its CLI11 node and what to run when it was given.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// One per file in cli/commands/; each adds its subcommand to `app`.
Command add_run_command(CLI::App& app, const GlobalOptions& global);
Command add_check_command(CLI::App& app, const GlobalOptions& global);
Command add_plan_command(CLI::App& app, const GlobalOptions& global);
Command add_simulate_command(CLI::App& app, const GlobalOptions& global);
// The real backend's commands (measured runs: real_backend/session/measured_run.h; their options: cli/backend_options.h, docs/real-backend.md).
Command add_execute_command(CLI::App& app, const GlobalOptions& global);
Command add_compare_command(CLI::App& app, const GlobalOptions& global);
Command add_validate_command(CLI::App& app, const GlobalOptions& global);
Command add_calibrate_command(CLI::App& app, const GlobalOptions& global);
Command add_inspect_command(CLI::App& app, const GlobalOptions& global);
Command add_export_onnx_command(CLI::App& app, const GlobalOptions& global);
Command add_sweep_command(CLI::App& app, const GlobalOptions& global);  // docs/capacity-planning.md
Command add_place_command(CLI::App& app, const GlobalOptions& global);  // automatic placement

Command add_converge_command(CLI::App& app, const GlobalOptions& global);  // time to accuracy
}  // namespace placesim
