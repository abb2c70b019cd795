// Precision: the numeric format a step computes in; selects a device's peak FLOP/s. fp8 is
// Transformer Engine style training: GEMMs in FP8, every other kernel and every stored tensor in bf16.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

// kFp8 comes last so the others keep their values (kernel-cost cache keys, model fingerprints).
enum class Precision { kFp32, kTf32, kFp16, kBf16, kInt8, kFp8 };

std::string to_string(Precision precision);  ///< "fp32", "tf32", "fp16", "bf16", "fp8", "int8"
std::optional<Precision> parse_precision(const std::string& text);
std::vector<std::string> precision_names();
/// Bytes per element of activations and weights in this precision (tf32 stores fp32; fp8 training
/// stores bf16: activations, weights, gradients and exchanged tensors stay 2-byte, docs/llm-planning.md).
double element_bytes(Precision precision);
/// Bytes per element of a GEMM's (matmul or convolution kernel's) operands: 1 under fp8 (E4M3 or
/// E5M2, Micikevicius et al. 2022), element_bytes otherwise.
double gemm_operand_bytes(Precision precision);

}  // namespace placesim
