// `placesim calibrate --from-trace TRACE.json --device ID -o TABLE.csv`: a PyTorch profiler
// (Kineto) trace into a measured kernel table (sim/calibration/kineto_trace.h) that
// `calibrate --from-kernels` then fits, so a user's own one-GPU profile calibrates their device.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace placesim {

struct TraceImportOptions {
  std::string trace;  ///< empty: not an import
};

/// Adds --from-trace to `calibrate`.
std::shared_ptr<TraceImportOptions> add_trace_options(CLI::App* calibrate);

/// Reads the trace and writes the table for `device` to `output` (a .csv). Returns the exit
/// status; throws InputError (exit 2) on a bad trace or option.
int import_trace(const TraceImportOptions& options, const std::string& device, const std::string& output);

}  // namespace placesim
