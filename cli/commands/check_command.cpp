// `placesim check FILE...`: validate any input file and explain every error.
#include <iostream>
#include <memory>

#include "sim/session/check_file.h"
#include "cli/command.h"

namespace placesim {

Command add_check_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::vector<std::string> files;
    std::string kind = "auto";
    bool allow_oom = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "check", "Validate scenario, model, device profile, links, cluster or plan files; explain every error");
  command->add_option("files", options->files, "Files to check")->required();
  command->add_option("--kind", options->kind, "What the files are (default: detect)")
      ->check(CLI::IsMember({"auto", "scenario", "model", "device", "links", "cluster", "plan", "prices", "collective-checks"}));
  command->add_flag("--allow-oom", options->allow_oom,
                    "Accept a scenario whose strategies do not fit in memory, naming the worst verdict (as run --allow-oom)");
  return {command, [options, &global] {
            HardwareCatalog catalog = global.catalog();
            int status = 0;
            for (const auto& file : options->files) {
              try {
                // Check before printing: "FILE: OK: " must not precede the error of a bad file.
                std::string summary = check_file(file, options->kind, catalog, options->allow_oom);
                std::cout << file << ": OK: " << summary << "\n";
              } catch (const InputError& error) {
                std::cerr << "error: " << error.what() << "\n";
                status = kExitInputError;
              }
            }
            return status;
          }};
}

}  // namespace placesim
