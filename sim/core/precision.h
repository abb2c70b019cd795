// Precision: the numeric format a step computes in; selects a device's peak FLOP/s.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

enum class Precision { kFp32, kTf32, kFp16, kBf16, kInt8 };

std::string to_string(Precision precision);  ///< "fp32", "tf32", "fp16", "bf16", "int8"
std::optional<Precision> parse_precision(const std::string& text);
std::vector<std::string> precision_names();
/// Bytes per element of activations and weights in this precision (tf32 stores fp32).
double element_bytes(Precision precision);

}  // namespace placesim
