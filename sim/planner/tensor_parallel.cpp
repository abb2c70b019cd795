#include "sim/planner/tensor_parallel.h"

#include "sim/core/glob.h"

namespace placesim {
namespace {

int64_t split_count(int64_t count, int64_t ranks) { return (count + ranks - 1) / ranks; }

/// The kernel one rank runs: column-parallel GEMMs split their output features (n), row-parallel
/// ones their inputs (k); an op on split heads (attention) runs 1/t of the heads (the batch of
/// its batched GEMM), an op under sequence parallelism 1/t of the rows.
std::shared_ptr<const KernelShape> shard_kernel(const KernelShape& kernel, TensorRole role, int64_t ranks) {
  KernelShape shard = kernel;
  if (kernel.kind == KernelKind::kGemm) {
    GemmShape& gemm = shard.gemm;
    switch (role) {
      case TensorRole::kColumn: gemm.n = split_count(gemm.n, ranks); break;
      case TensorRole::kRow: gemm.k = split_count(gemm.k, ranks); break;
      case TensorRole::kSplit:
        if (gemm.samples_in_batch) {
          gemm.batch = split_count(gemm.batch, ranks);
        } else {
          gemm.n = split_count(gemm.n, ranks);
        }
        break;
      case TensorRole::kSequence: gemm.m = split_count(gemm.m, ranks); break;
      case TensorRole::kReplicated: break;
    }
  } else if (kernel.kind == KernelKind::kConv2d) {
    shard.conv.n = split_count(shard.conv.n, ranks);
  } else if (kernel.kind == KernelKind::kAttention) {
    // Heads split over the tensor ranks; under sequence (context) parallelism, the queries.
    if (role == TensorRole::kSequence) {
      shard.attention.queries = split_count(shard.attention.queries, ranks);
    } else if (role != TensorRole::kReplicated) {
      shard.attention.batch = split_count(shard.attention.batch, ranks);
    }
  }
  return std::make_shared<const KernelShape>(shard);
}

bool output_split(TensorRole role) {
  return role == TensorRole::kColumn || role == TensorRole::kSplit || role == TensorRole::kSequence;
}

}  // namespace

std::vector<std::string> default_column_parallel_ops() {
  return {"*/qkv", "*/mlp_fc", "lm_head/MatMul", "*/cross_q", "*/cross_k", "*/cross_v"};
}
std::vector<std::string> default_row_parallel_ops() {
  return {"*/attn_proj", "*/mlp_proj", "embedding/wte", "*/cross_proj", "decoder_embedding/wte"};
}
std::vector<std::pair<std::string, std::string>> default_tied_weights() {
  return {{"lm_head/MatMul", "embedding/wte"}, {"decoder_embedding/wte", "embedding/wte"}};
}
std::vector<std::string> default_selective_recompute_ops() {
  return {"*/scores",       "*/position_bias", "*/softmax",      "*/attn_dropout",
          "*/context",      "*/cross_scores",  "*/cross_softmax", "*/cross_context"};
}

std::vector<TensorRole> tensor_parallel_roles(const OpGraph& graph, const std::vector<std::string>& column,
                                              const std::vector<std::string>& row) {
  std::vector<TensorRole> roles(graph.size(), TensorRole::kReplicated);
  const std::vector<GlobPattern> rows = glob_patterns(row), columns = glob_patterns(column);
  std::vector<OpId> order;
  graph.topological_order(&order, nullptr);
  for (OpId v : order) {
    const std::string& name = graph.op(v).name;
    if (matches_any(rows, name)) {
      roles[v] = TensorRole::kRow;
    } else if (matches_any(columns, name)) {
      roles[v] = TensorRole::kColumn;
    } else {
      for (const auto& input : graph.inputs(v)) {
        if (!input.edge.control && output_split(roles[input.op])) roles[v] = TensorRole::kSplit;
      }
    }
  }
  return roles;
}

void use_sequence_parallelism(std::vector<TensorRole>* roles) {
  for (TensorRole& role : *roles) {
    if (role == TensorRole::kReplicated) role = TensorRole::kSequence;
  }
}

Op tensor_parallel_shard(const Op& op, TensorRole role, int64_t ranks) {
  if (role == TensorRole::kReplicated || ranks == 1) return op;
  const double t = static_cast<double>(ranks);
  Op shard = op;
  shard.forward_flops /= t;
  shard.backward_flops /= t;
  shard.forward_bytes /= t;
  shard.backward_bytes /= t;
  shard.batch_statistics_bytes /= t;
  shard.gradient_sum_bytes /= t;
  if (role != TensorRole::kSequence) shard.parameter_count /= t;
  if (role != TensorRole::kRow) shard.output_bytes /= t;
  if (op.kernel) shard.kernel = shard_kernel(*op.kernel, role, ranks);
  return shard;
}

double tensor_parallel_edge_bytes(double edge_bytes, TensorRole producer, int64_t ranks) {
  return output_split(producer) ? edge_bytes / static_cast<double>(ranks) : edge_bytes;
}

double saved_activation_bytes(const OpGraph& graph, const std::vector<TensorRole>& roles, int64_t ranks, OpId v,
                              const std::vector<bool>* recomputed) {
  const Op& op = graph.op(v);
  const Op shard = tensor_parallel_shard(op, roles[v], ranks);
  if (recomputed && (*recomputed)[v]) {
    if (op.type == "Softmax" || op.type == "Dropout") return 0;  // re-run from their inputs
    double bytes = 0;
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && !(*recomputed)[input.op]) {
        bytes += tensor_parallel_edge_bytes(input.edge.bytes, roles[input.op], ranks);
      }
    }
    return bytes;
  }
  if (op.type == "Softmax") return shard.output_bytes;
  if (op.type == "Dropout" || op.type == "DropoutAdd") return shard.output_bytes / op.dtype_bytes;  // a 1-byte mask per element
  if (op.type == "AddV2" || op.type == "Placeholder" || op.type == "Reshape" || op.type == "ConcatV2" ||
      op.kind == OpKind::kVariable || op.kind == OpKind::kNoOp) {
    return 0;
  }
  // GEMMs, normalizations, activations and the rest keep their inputs.
  double bytes = 0;
  for (const auto& input : graph.inputs(v)) {
    if (!input.edge.control) bytes += tensor_parallel_edge_bytes(input.edge.bytes, roles[input.op], ranks);
  }
  return bytes;
}

}  // namespace placesim
