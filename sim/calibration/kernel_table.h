// KernelTable: measured kernel times read from a CSV table of hardware_profiles/kernels/
// (header device,op,shape,precision,algorithm,seconds,source; format in that folder's README).
// GEMM and convolution rows carry their kernel shape; memory-bound rows (elementwise, softmax,
// layernorm, pooling) the bytes they move, pooling rows also the window elements they read. Rows
// this model cannot use are kept out with a count of why.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/kernel_model.h"
#include "sim/core/precision.h"
#include "sim/graph/kernel_shape.h"
#include "sim/graph/op.h"

namespace placesim {

struct KernelMeasurement {
  std::string device;
  std::string op;  ///< as in the table: gemm, bmm, linear, conv_fwd, ..., elementwise, softmax, layernorm
  KernelShape shape;
  /// Memory-bound rows: bytes read and written, element bytes x elements x (tensor inputs + 1) for
  /// elementwise, x 2 for softmax and layernorm (hardware_profiles/kernels/README.md); 0 otherwise.
  double memory_bytes = 0;
  /// Pooling rows: window elements read, output elements x window (layer_costs.h, pooling_flops).
  double window_reads = 0;
  std::string shape_text;  ///< the table's shape cell (identifies memory-bound rows)
  KernelPass pass = kForwardPass;
  Precision precision = Precision::kFp32;
  /// The algorithm the source says ran (cuDNN's choice), when it says.
  std::optional<ConvAlgorithm> algorithm;
  /// Fused attention rows: the kernels' implementation as the table names it ("flash2", "cudnn").
  std::string implementation;
  double seconds = 0;
  std::string source;
  std::string file;  ///< table it came from
  int64_t line = 0;  ///< 1-based line in that file
};

struct KernelTable {
  std::vector<KernelMeasurement> rows;
  /// Rows left out, by reason ("elementwise: no kernel shape", ...).
  std::map<std::string, int64_t> skipped;
};

/// A memory-bound row (elementwise, softmax, layernorm, pooling): no kernel shape, its bytes.
inline bool is_memory_bound(const KernelMeasurement& row) { return row.memory_bytes > 0; }
/// The op kind a memory-bound row's op stands for in a model graph: softmax a reduction,
/// layernorm a normalization, pooling pooling, elementwise (and anything else) elementwise.
inline OpKind memory_op_kind(const std::string& op) {
  return op == "softmax"     ? OpKind::kReduction
         : op == "layernorm" ? OpKind::kNormalization
         : op == "pooling"   ? OpKind::kPooling
                             : OpKind::kElementwise;
}
/// Pooling kernels: bound by their window reads or their bytes (pooling_model.h).
inline bool is_pooling_row(const KernelMeasurement& row) { return memory_op_kind(row.op) == OpKind::kPooling; }
/// Softmax and layernorm: reductions along a dimension, with their own bandwidth efficiency.
inline bool is_reduction_row(const KernelMeasurement& row) { return is_reduction_kind(memory_op_kind(row.op)); }

/// Reads one table; malformed rows are InputErrors naming the file, the line and the column.
/// Rows of other devices than `device` (when not empty) are skipped silently; fused attention
/// rows (attention_fwd, attention_bwd) are skipped with their count.
KernelTable read_kernel_table(const std::filesystem::path& path, const std::string& device = "");
/// The fused attention rows of a table only (shape batch;heads;seq;head_dim;causal, the
/// implementation in the algorithm column), each with an AttentionShape (queries = keys = seq).
KernelTable read_attention_table(const std::filesystem::path& path, const std::string& device = "");

/// cuDNN's algorithm names (CUDNN_CONVOLUTION_*_ALGO_X without the prefix) in the model's families.
std::optional<ConvAlgorithm> conv_algorithm_family(const std::string& cudnn_name);

}  // namespace placesim
