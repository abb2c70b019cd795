#include "sim/core/precision.h"

#include <array>
#include <utility>

namespace placesim {
namespace {
constexpr std::array<std::pair<Precision, const char*>, 6> kNames{{
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kFp16, "fp16"},
    {Precision::kBf16, "bf16"},
    {Precision::kFp8, "fp8"},
    {Precision::kInt8, "int8"},
}};
}  // namespace

std::string to_string(Precision precision) {
  for (const auto& [value, name] : kNames) {
    if (value == precision) return name;
  }
  return "fp32";
}

std::optional<Precision> parse_precision(const std::string& text) {
  for (const auto& [value, name] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> precision_names() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) names.emplace_back(entry.second);
  return names;
}

double element_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16:
    case Precision::kFp8: return 2;  // Transformer Engine keeps tensors outside its GEMMs in bf16
    case Precision::kInt8: return 1;
  }
  return 4;
}

double gemm_operand_bytes(Precision precision) { return precision == Precision::kFp8 ? 1 : element_bytes(precision); }

}  // namespace placesim
