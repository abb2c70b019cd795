#include "cli/commands/calibrate_trace.h"

#include <filesystem>
#include <iostream>

#include "sim/calibration/kernel_table.h"
#include "sim/calibration/kineto_trace.h"
#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/core/units_format.h"

namespace placesim {

std::shared_ptr<TraceImportOptions> add_trace_options(CLI::App* calibrate) {
  auto options = std::make_shared<TraceImportOptions>();
  calibrate->add_option("--from-trace", options->trace,
                        "TRACE.json: a PyTorch profiler (Kineto) trace recorded with record_shapes=True, into a "
                        "kernel table of --device's GEMMs and convolutions; -o TABLE.csv (then --from-kernels)");
  return options;
}

int import_trace(const TraceImportOptions& options, const std::string& device, const std::string& output) {
  const std::filesystem::path path = output;
  if (path.extension() != ".csv" || path.stem().empty()) {
    throw InputError("--output", "", "with --from-trace, expected TABLE.csv, got \"" + output + "\"");
  }
  if (device.empty()) throw InputError("--device", "", "--from-trace needs --device ID (the profile the table is of)");
  if (device.find_first_of(",\n\r;") != std::string::npos) {
    throw InputError("--device", "", "no commas, semicolons or line breaks (a CSV field), got \"" + device + "\"");
  }
  const KinetoTraceTable table = read_kineto_trace(options.trace);
  const std::string name = std::filesystem::path(options.trace).filename().string();
  write_file_atomically(path, kineto_trace_table_csv(table, device, name));
  const KernelTable written = read_kernel_table(path, device);  // what --from-kernels will read
  std::map<std::string, int64_t> per_op;
  for (const TraceKernelRow& row : table.rows) ++per_op[row.op];
  std::cerr << "placesim: wrote " << output << ": " << written.rows.size() << " distinct kernels of " << device
            << " from " << table.kernels_used << " of the trace's " << table.kernel_events << " GPU kernels (";
  bool first = true;
  for (const auto& [op, count] : per_op) {
    std::cerr << (first ? "" : ", ") << op << " " << count;
    first = false;
  }
  std::cerr << ")\n";
  for (const auto& [reason, count] : table.skipped) {
    std::cerr << "  left out " << count << " kernel(s): " << reason << "\n";
  }
  std::cerr << "placesim: fit it with: placesim calibrate --from-kernels " << output << " --device " << device
            << " -o PROFILE.json\n";
  return 0;
}

}  // namespace placesim
