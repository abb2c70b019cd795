// `placesim calibrate --from-nccl-tests LOG -o FILE.csv`: nccl-tests output into a collective
// profile (sim/cluster/nccl_tests_log.h) that a cluster file names as "collective_profile".
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace placesim {

struct NcclTestsImportOptions {
  std::string log;  ///< empty: not an import
  std::string system;
  std::string collective = "all_reduce";
  std::string source;
};

/// Adds --from-nccl-tests, --system, --collective and --source to `calibrate`.
std::shared_ptr<NcclTestsImportOptions> add_nccl_tests_options(CLI::App* calibrate);

/// Reads the log and writes the profile to `output` (a .csv). Returns the exit status; throws
/// InputError (exit 2) on a bad log or option.
int import_nccl_tests(const NcclTestsImportOptions& options, const std::string& output);

}  // namespace placesim
