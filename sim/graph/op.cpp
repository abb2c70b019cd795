#include "sim/graph/op.h"

#include <array>
#include <utility>

namespace placesim {
namespace {
constexpr std::array<std::pair<OpKind, const char*>, 12> kOpKindNames{{
    {OpKind::kMatMul, "matmul"},
    {OpKind::kConv, "conv"},
    {OpKind::kElementwise, "elementwise"},
    {OpKind::kNormalization, "normalization"},
    {OpKind::kReduction, "reduction"},
    {OpKind::kPooling, "pooling"},
    {OpKind::kEmbedding, "embedding"},
    {OpKind::kDataMovement, "data_movement"},
    {OpKind::kVariable, "variable"},
    {OpKind::kOptimizer, "optimizer"},
    {OpKind::kNoOp, "noop"},
    {OpKind::kOther, "other"},
}};
}  // namespace

std::string to_string(OpKind kind) {
  for (const auto& [value, name] : kOpKindNames) {
    if (value == kind) return name;
  }
  return "other";
}

std::optional<OpKind> parse_op_kind(const std::string& text) {
  for (const auto& [value, name] : kOpKindNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> op_kind_names() {
  std::vector<std::string> names;
  for (const auto& entry : kOpKindNames) names.emplace_back(entry.second);
  return names;
}

bool is_gemm_kind(OpKind kind) { return kind == OpKind::kMatMul || kind == OpKind::kConv; }

bool is_reduction_kind(OpKind kind) { return kind == OpKind::kNormalization || kind == OpKind::kReduction; }

int64_t attention_heads(const Op& op) {
  if (op.kernel && op.kernel->kind == KernelKind::kAttention && !op.output_shape.empty() && op.output_shape[0] > 0) {
    return op.kernel->attention.batch / op.output_shape[0];  // samples x heads
  }
  if (op.type != "BatchMatMulV2" || op.output_shape.size() != 4) return 0;
  return op.output_shape[1];
}

int64_t attention_queries(const Op& op) {
  if (attention_heads(op) == 0 || !op.kernel) return 0;
  if (op.kernel->kind == KernelKind::kAttention) return op.kernel->attention.queries;
  return op.kernel->kind == KernelKind::kGemm ? op.kernel->gemm.m : 0;
}

std::string_view numbered_layer_prefix(std::string_view layer) {
  const size_t dot = layer.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == layer.size() ||
      layer.find_first_not_of("0123456789", dot + 1) != std::string_view::npos) {
    return {};
  }
  return layer.substr(0, dot);
}

}  // namespace placesim
