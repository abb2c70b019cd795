#include "sim/planner/context_parallel.h"

#include <algorithm>

#include "sim/planner/tensor_parallel.h"

namespace placesim {

Op context_parallel_shard(const Op& op, int64_t ranks) {
  // The split of an op's tokens is sequence parallelism's (tensor_parallel.h, kSequence).
  return tensor_parallel_shard(op, TensorRole::kSequence, ranks);
}

double attention_key_value_bytes(const OpGraph& graph, OpId v) {
  const Op& op = graph.op(v);
  if (attention_heads(op) == 0 || !op.kernel) return 0;
  double read = 0;
  for (const auto& input : graph.inputs(v)) {
    if (!input.edge.control) read += input.edge.bytes;
  }
  double queries = 0;  // batch (samples x heads) x queries x head width
  if (op.kernel->kind == KernelKind::kAttention) {
    // A fused kernel reads Q, K and V: the keys and values are what it reads beyond Q, together.
    const AttentionShape& a = op.kernel->attention;
    queries = static_cast<double>(a.batch) * static_cast<double>(a.queries) * static_cast<double>(a.head_dim) *
              op.dtype_bytes;
    return std::max(0.0, read - queries);
  }
  if (op.kernel->kind != KernelKind::kGemm) return 0;
  const GemmShape& scores = op.kernel->gemm;  // [samples x heads][queries x keys x head width]
  queries = static_cast<double>(scores.batch) * static_cast<double>(scores.m) * static_cast<double>(scores.k) *
            op.dtype_bytes;
  const double keys = read - queries;
  return keys > 0 ? 2 * keys : 0;  // the values, read by the context op after it, as many bytes again
}

}  // namespace placesim
