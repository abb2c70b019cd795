// KinetoTraceTable: a PyTorch profiler (Kineto) Chrome trace, recorded with record_shapes=True,
// turned into measured kernel-table rows (hardware_profiles/kernels/README.md): each GPU kernel is
// paired with the operator that launched it, GEMM and convolution operators are read as shapes,
// and each distinct shape gets the median of its calls. `placesim calibrate --from-trace`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/core/precision.h"

namespace placesim {

/// One distinct (op, shape, precision, algorithm) of the trace.
struct TraceKernelRow {
  std::string op;         ///< gemm, bmm, conv_fwd, conv_bwd_data, conv_bwd_filter
  std::string shape;      ///< the table's shape text ("m=...;n=...;k=...;ta=0;tb=0", conv keys)
  Precision precision = Precision::kFp32;
  std::string algorithm;  ///< "cublas" for GEMMs; cuDNN's family for conv_fwd when the kernel names say it
  double median_seconds = 0;  ///< median over calls of the summed durations of the call's kernels
  int64_t calls = 0;
  std::string aten_op;    ///< the PyTorch operator, e.g. aten::addmm
  std::string kernels;    ///< the first call's kernel names, shortened
};

struct KinetoTraceTable {
  std::vector<TraceKernelRow> rows;  ///< sorted by op, then shape
  int64_t kernel_events = 0;         ///< GPU kernels in the trace
  int64_t kernels_used = 0;          ///< of which went into rows
  /// Kernels left out, by reason ("aten::relu: not a GEMM or convolution", ...).
  std::map<std::string, int64_t> skipped;
};

/// Reads a trace (Chrome trace JSON: an object with "traceEvents", or a bare event array; times
/// in microseconds, as Kineto writes them). Throws InputError naming the file and JSON path for
/// what is not such a trace, and when it holds no GPU kernels or none of a GEMM or convolution.
KinetoTraceTable read_kineto_trace(const std::filesystem::path& path);

/// The table as CSV (device,op,shape,precision,algorithm,seconds,source), one row per entry;
/// `trace_name` goes into every row's source with the call count and the operator.
std::string kineto_trace_table_csv(const KinetoTraceTable& table, const std::string& device,
                                   const std::string& trace_name);

}  // namespace placesim
