#include "sim/cluster/kernel_model.h"

#include <cstring>
#include <functional>
#include <vector>

namespace placesim {

std::string to_string(ConvAlgorithm algorithm) {
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm: return "implicit_gemm";
    case ConvAlgorithm::kWinogradFused: return "winograd";
    case ConvAlgorithm::kWinogradNonfused: return "winograd_nonfused";
    case ConvAlgorithm::kFft: return "fft";
  }
  return "implicit_gemm";
}

const std::vector<ConvAlgorithm>& conv_algorithms() {
  static const std::vector<ConvAlgorithm> all = {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kWinogradFused,
                                                 ConvAlgorithm::kWinogradNonfused, ConvAlgorithm::kFft};
  return all;
}

namespace {

/// The precision whose fitted entry of `by_precision` applies to `precision`: its own; else the
/// 16-bit tensor-core formats stand in for each other (A100, H100 datasheets: one fp16 and bf16
/// rate) and for fp8 (no measured fp8 kernels: an estimate); else none.
std::optional<Precision> fitted_for(const std::map<Precision, double>& by_precision, Precision precision) {
  std::vector<Precision> candidates = {precision};
  if (precision == Precision::kFp16) candidates.push_back(Precision::kBf16);
  if (precision == Precision::kBf16) candidates.push_back(Precision::kFp16);
  if (precision == Precision::kFp8) candidates.insert(candidates.end(), {Precision::kBf16, Precision::kFp16});
  for (Precision candidate : candidates) {
    if (by_precision.count(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Precision> KernelModel::gemm_efficiency_source(Precision precision) const {
  if (auto fitted = fitted_for(gemm_efficiency, precision)) return fitted;
  if (gemm_efficiency.count(Precision::kFp32)) return Precision::kFp32;
  return std::nullopt;
}

double KernelModel::gemm_efficiency_for(Precision precision) const {
  auto source = gemm_efficiency_source(precision);
  return source ? gemm_efficiency.at(*source) : 0.0;
}

double KernelModel::input_power_fraction(Precision precision) const {
  if (!input_power) return 1.0;
  auto it = input_power->throughput_fraction.find(precision);
  return it == input_power->throughput_fraction.end() ? 1.0 : it->second;
}

double KernelModel::tile_overhead_k_for(Precision precision) const {
  auto fitted = fitted_for(tile_overhead_k_by_precision, precision);
  return fitted ? tile_overhead_k_by_precision.at(*fitted) : tile_overhead_k;
}

double KernelModel::conv_efficiency_for(ConvAlgorithm algorithm) const {
  auto it = conv_efficiency.find(algorithm);
  return it == conv_efficiency.end() ? 0.0 : it->second;
}

uint64_t KernelModel::fingerprint() const {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](double value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
  };
  mix(static_cast<double>(sm_count));
  for (const auto& [precision, value] : gemm_efficiency) {
    mix(static_cast<double>(precision));
    mix(value);
  }
  mix(tile_overhead_k);
  for (const auto& [precision, value] : tile_overhead_k_by_precision) {
    mix(static_cast<double>(precision));
    mix(value);
  }
  mix(small_tile_exponent);
  mix(kernel_overhead_seconds);
  for (const auto& [algorithm, value] : conv_efficiency) {
    mix(static_cast<double>(algorithm));
    mix(value);
  }
  mix(conv_overhead_seconds);
  mix(conv_small_tile_exponent);
  mix(conv_fill_waves);
  mix(memory_efficiency);
  mix(memory_latency_seconds);
  mix(reduction_memory_efficiency);
  mix(isolated_memory_floor_seconds);
  mix(isolated_reduction_floor_seconds);
  mix(pooling_reads_per_second_per_sm);
  mix(isolated_pooling_floor_seconds);
  if (attention) {
    mix(attention->forward_efficiency);
    mix(attention->backward_efficiency);
  }
  if (input_power) {
    for (const auto& [precision, value] : input_power->throughput_fraction) {
      mix(static_cast<double>(precision));
      mix(value);
    }
  }
  return hash;
}

}  // namespace placesim
