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

}  // namespace placesim
