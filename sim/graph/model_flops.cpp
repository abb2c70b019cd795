#include "sim/graph/model_flops.h"

#include <algorithm>
#include <vector>

namespace placesim {
namespace {

/// An attention score op: a batched GEMM whose output is [batch, heads, T, T].
bool is_attention_scores(const Op& op) {
  const auto& shape = op.output_shape;
  return op.kind == OpKind::kMatMul && op.type == "BatchMatMulV2" && shape.size() == 4 && shape[2] == shape[3] &&
         shape[0] > 0 && shape[1] > 0 && shape[2] > 0;
}

}  // namespace

double active_parameters(const OpGraph& graph, int64_t batch_size, int64_t sequence) {
  // An expert's ops are those between a MoeDispatch and the MoeCombine: each sees the rows its
  // GEMM takes of the batch's tokens.
  std::vector<bool> routed(graph.size(), false);
  bool experts = false;
  for (OpId v = 0; v < graph.size() && !experts; ++v) experts = graph.op(v).type == "MoeDispatch";
  std::vector<OpId> order;
  if (experts) graph.topological_order(&order, nullptr);  // a dense model needs no walk
  const double tokens = static_cast<double>(std::max<int64_t>(1, batch_size)) * static_cast<double>(sequence);
  for (OpId v : order) {
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && (routed[input.op] || graph.op(input.op).type == "MoeDispatch")) routed[v] = true;
    }
    if (graph.op(v).type == "MoeCombine") routed[v] = false;
  }
  double active = 0;  // summed in op order, as ModelFlops::parameters
  for (OpId v = 0; v < graph.size(); ++v) {
    const Op& op = graph.op(v);
    double share = 1;
    if (routed[v] && op.kernel && op.kernel->kind == KernelKind::kGemm && !op.kernel->gemm.samples_in_batch) {
      share = std::min(1.0, static_cast<double>(op.kernel->gemm.m) / tokens);
    }
    active += op.parameter_count * share;
  }
  return active;
}

std::optional<TransformerShape> transformer_shape(const OpGraph& graph) {
  TransformerShape shape;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    int64_t heads = 0, sequence = 0, head_dim = 0;
    if (op.kernel && op.kernel->kind == KernelKind::kAttention && !op.output_shape.empty() && op.output_shape[0] > 0) {
      // A fused attention kernel: its shape says it (the FLOPs it declares halve with a causal mask).
      heads = attention_heads(op);
      sequence = op.kernel->attention.keys;
      head_dim = op.kernel->attention.head_dim;
    } else if (is_attention_scores(op)) {
      const double batch = static_cast<double>(op.output_shape[0]), h = static_cast<double>(op.output_shape[1]),
                   t = static_cast<double>(op.output_shape[2]);
      // Forward FLOPs of Q K^T: 2 x batch x heads x T x T x Q.
      head_dim = static_cast<int64_t>(op.forward_flops / (2.0 * batch * h * t * t) + 0.5);
      heads = op.output_shape[1];
      sequence = op.output_shape[2];
    } else {
      continue;
    }
    if (shape.layers > 0 && (shape.heads != heads || shape.sequence != sequence || shape.head_dim != head_dim)) {
      return std::nullopt;  // layers of different shapes: not the formula's model
    }
    shape.heads = heads;
    shape.sequence = sequence;
    shape.head_dim = head_dim;
    ++shape.layers;
  }
  if (shape.layers == 0 || shape.head_dim <= 0) return std::nullopt;
  return shape;
}

ModelFlops model_flops(const OpGraph& graph, int64_t batch_size, bool training, Recomputation recomputation) {
  ModelFlops flops;
  double forward = 0, backward = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    flops.parameters += op.parameter_count;
    forward += op.forward_flops;
    backward += op.backward_flops;
  }
  flops.transformer = transformer_shape(graph);
  if (flops.transformer) {
    const TransformerShape& t = *flops.transformer;
    flops.active_parameters = active_parameters(graph, batch_size, t.sequence);
    const double n = flops.active_parameters;
    // Per token and layer, Q K^T and the context each take 2 H Q T multiply-adds' FLOPs forward.
    const double attention_forward = 4.0 * static_cast<double>(t.layers * t.heads * t.head_dim * t.sequence);
    const double forward_per_token = 2.0 * n + attention_forward;
    const double model_per_token = training ? 3.0 * forward_per_token : forward_per_token;  // 6N + 12 L H Q T
    double recomputed_per_token = 0;
    if (training && recomputation == Recomputation::kFull) recomputed_per_token = forward_per_token;
    if (training && recomputation == Recomputation::kSelective) recomputed_per_token = attention_forward;
    flops.tokens_per_sample = static_cast<double>(t.sequence);
    flops.model_flops_per_sample = model_per_token * flops.tokens_per_sample;
    flops.hardware_flops_per_sample = (model_per_token + recomputed_per_token) * flops.tokens_per_sample;
    return flops;
  }
  const double samples = static_cast<double>(batch_size > 0 ? batch_size : 1);
  flops.model_flops_per_sample = (training ? forward + backward : forward) / samples;
  flops.hardware_flops_per_sample =
      flops.model_flops_per_sample + (training && recomputation == Recomputation::kFull ? forward / samples : 0.0);
  return flops;
}

}  // namespace placesim
