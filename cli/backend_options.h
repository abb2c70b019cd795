// --backend, --warmup, --runs, --quiet, --share-gpus and --gpu-dispatch, shared by `execute` and
// `validate --backend`, and their translation into a measured run's options (progress and
// warnings on stderr).
#pragma once

#include <string>

#include "cli/command.h"
#include "real_backend/session/measured_run.h"

namespace placesim {

struct BackendOptions {
  std::string backend = "cpu";
  int warmup_runs = 2;
  int timed_runs = 7;
  bool quiet = false;
  bool share_gpus = false;
  std::string gpu_dispatch = "ahead";
};
void add_backend_options(CLI::App* command, BackendOptions* options);
real::Backend parse_backend_option(const std::string& text);

/// The options of a measured run of plan `plan_name`: progress on stderr unless --quiet,
/// warnings on stderr always.
MeasuredRunOptions measured_run_options(const BackendOptions& options, const std::string& plan_name);

/// Prints a note of the session ("placesim: " + line) on stderr.
void print_note(const std::string& line);

}  // namespace placesim
