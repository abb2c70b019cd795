#include "cli/commands/calibrate_nccl_tests.h"

#include <filesystem>
#include <iostream>

#include "sim/cluster/collective_profile.h"
#include "sim/cluster/nccl_tests_log.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"

namespace placesim {

std::shared_ptr<NcclTestsImportOptions> add_nccl_tests_options(CLI::App* calibrate) {
  auto options = std::make_shared<NcclTestsImportOptions>();
  calibrate->add_option("--from-nccl-tests", options->log,
                        "LOG: nccl-tests output (all_reduce_perf, ...) to turn into a collective profile; -o FILE.csv");
  calibrate->add_option("--system", options->system, "With --from-nccl-tests: the system name (default: FILE's stem)");
  calibrate->add_option("--collective", options->collective, "With --from-nccl-tests: what the log measured")
      ->check(CLI::IsMember(collective_kind_names()))
      ->capture_default_str();
  calibrate->add_option("--source", options->source,
                        "With --from-nccl-tests: where the log comes from, for every row (default: LOG as given)");
  return options;
}

int import_nccl_tests(const NcclTestsImportOptions& options, const std::string& output) {
  const std::filesystem::path path = output;
  if (path.extension() != ".csv" || path.stem().empty()) {
    throw InputError("--output", "", "with --from-nccl-tests, expected FILE.csv, got \"" + output + "\"");
  }
  for (const std::string& text : {options.system, options.source}) {
    if (text.find_first_of(",\n\r") != std::string::npos) {
      throw InputError(text == options.system ? "--system" : "--source", "",
                       "no commas or line breaks (a CSV field), got \"" + text + "\"");
    }
  }
  NcclTestsLog log = parse_nccl_tests_log(options.log);
  const CollectiveKind kind = *parse_collective_kind(options.collective);
  check_nccl_tests_kind(log, kind, options.log);
  const std::string system = options.system.empty() ? path.stem().string() : options.system;
  write_file_atomically(path, nccl_tests_profile_csv(log, kind, system, options.source.empty() ? options.log : options.source));
  read_collective_profile(path);  // what a cluster will read back
  std::cerr << "placesim: wrote " << output << ": " << options.collective << " over " << log.ranks << " GPUs on "
            << log.hosts << " host(s), " << log.rows.size() << " sizes; name it in a cluster file as "
            << "\"collective_profile\": \"" << output << "\"\n";
  return 0;
}

}  // namespace placesim
