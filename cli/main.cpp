// placesim: predicts how long a deep-learning training step takes on a cluster, from a scenario
// file. Exit status (kExitStatusHelp, printed by --help): 0 success, 2 bad input (the message names
// the file and JSON path), 1 an internal error. Each subcommand lives in its own file under
// cli/commands/.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim {
namespace {

constexpr const char* kExitStatusHelp =
    "Exit status: 0 success; 2 bad input: a command line, an input file (the message names the file, "
    "the JSON path and the bad value) or a configuration that does not fit in memory (without --allow-oom); "
    "1 an internal error or this machine out of memory. A process killed by signal N exits 128 + N (shell "
    "convention).";

/// When no subcommand was given but a word stands where one goes: "unknown subcommand 'x'" with a
/// did-you-mean and the list of subcommands. Empty otherwise (let CLI11 explain the error).
std::string unknown_subcommand(const CLI::App& app, const std::vector<Command>& commands) {
  for (const Command& command : commands) {
    if (command.app->parsed()) return "";
  }
  std::vector<std::string> names;
  for (const Command& command : commands) names.push_back(command.app->get_name());
  for (const std::string& word : app.remaining()) {
    if (word.empty() || word[0] == '-') continue;
    std::string message = "unknown subcommand '" + shown_word(word) + "'";
    if (std::string close = did_you_mean(word, names); !close.empty()) message += "; did you mean '" + close + "'?";
    message += " (subcommands:";
    for (const std::string& name : names) message += " " + name;
    return message + "; placesim --help explains each)";
  }
  return "";
}

int main_with_errors_handled(int argc, char** argv) {
  CLI::App app{
      "placesim predicts how fast a deep-learning training step runs on a cluster of CPUs, GPUs and TPUs.\n"
      "A scenario file names a model, a cluster and a strategy; see docs/scenario-format.md.",
      "placesim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "placesim 0.1.0");
  GlobalOptions global;
  app.add_option("--profiles", global.profiles,
                 "Hardware profile directory (default: $PLACESIM_PROFILES or the bundled hardware_profiles/)");
  app.add_option_function<uint64_t>(
         "--max-input-bytes", [](uint64_t bytes) { set_input_size_limit(bytes); },
         "Largest input file read, in bytes (default: $PLACESIM_MAX_INPUT_BYTES or 268435456, 256 MiB)")
      ->check(CLI::PositiveNumber);
  std::vector<Command> commands = {
      add_run_command(app, global),
      add_check_command(app, global),
      add_plan_command(app, global),
      add_simulate_command(app, global),
      add_execute_command(app, global),
      add_compare_command(app, global),
      add_validate_command(app, global),
      add_calibrate_command(app, global),
      add_inspect_command(app, global),
      add_export_onnx_command(app, global),
      add_sweep_command(app, global),
      add_converge_command(app, global),
      add_place_command(app, global),
  };
  app.footer(kExitStatusHelp);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() != 0) {
      if (std::string unknown = unknown_subcommand(app, commands); !unknown.empty()) {
        std::cerr << "error: " << unknown << "\n";
        return kExitInputError;
      }
    }
    int status = app.exit(error);
    return status == 0 ? 0 : kExitInputError;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
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
