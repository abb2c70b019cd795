#include "sim/cost/conv_model.h"

#include <limits>

namespace placesim {
namespace {

bool unit_stride_and_dilation(const Conv2dShape& conv) {
  return conv.stride_h == 1 && conv.stride_w == 1 && conv.dilation_h == 1 && conv.dilation_w == 1 && conv.groups == 1;
}

/// Winograd F(m x m, r x r) works on (m + r - 1)^2-point tiles: that many GEMMs, one per point.
struct Winograd {
  int64_t output_tile;  ///< m
  int64_t points;       ///< (m + r - 1)^2
};

Winograd winograd_for(ConvAlgorithm algorithm, const Conv2dShape& conv) {
  if (algorithm == ConvAlgorithm::kWinogradFused) return {2, 16};  // F(2x2, 3x3)
  if (conv.r == 5) return {2, 36};                                 // F(2x2, 5x5)
  return {4, 36};                                                  // F(4x4, 3x3)
}

int64_t next_power_of_two(int64_t value) {
  int64_t power = 1;
  while (power < value) power *= 2;
  return power;
}

}  // namespace

bool conv_algorithm_eligible(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass) {
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm: return true;
    case ConvAlgorithm::kWinogradFused:
      // cuDNN's fused Winograd: 3x3, unit stride, forward and backward data.
      return unit_stride_and_dilation(conv) && conv.r == 3 && conv.s == 3 && pass != kBackwardFilterPass;
    case ConvAlgorithm::kWinogradNonfused:
      // cuDNN >= 5.1: 3x3 and 5x5, unit stride, all three passes.
      return unit_stride_and_dilation(conv) && conv.r == conv.s && (conv.r == 3 || conv.r == 5);
    case ConvAlgorithm::kFft:
      // FFT: unit stride, a filter larger than 1x1 (a 1x1 convolution is a plain GEMM).
      return unit_stride_and_dilation(conv) && conv.r * conv.s > 1 && conv.h + 2 * conv.pad_h <= 256 &&
             conv.w + 2 * conv.pad_w <= 256;
  }
  return false;
}

ConvAsGemm conv_as_gemm(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass) {
  ConvAsGemm result;
  result.tensor_elements = static_cast<double>(conv.n) * static_cast<double>(conv.c * conv.h * conv.w) +
                           static_cast<double>(conv.k) * static_cast<double>(conv.c / conv.groups * conv.r * conv.s) +
                           static_cast<double>(conv.n) * static_cast<double>(conv.k * conv.p() * conv.q());
  GemmShape& gemm = result.gemm;
  const int64_t g = conv.groups, c = conv.c / g, k = conv.k / g;
  const int64_t pq = conv.p() * conv.q(), hw = conv.h * conv.w;
  switch (algorithm) {
    case ConvAlgorithm::kImplicitGemm:
      gemm.batch = g;
      if (pass == kForwardPass) {
        gemm.m = conv.n * pq, gemm.n = k, gemm.k = c * conv.r * conv.s;
      } else if (pass == kBackwardDataPass) {
        // An input pixel receives from ceil(r / stride) x ceil(s / stride) taps of each filter:
        // strided kernels skip the rest (the pass does the forward's multiply-adds).
        gemm.m = conv.n * hw, gemm.n = c,
        gemm.k = k * ceil_div(conv.r, conv.stride_h) * ceil_div(conv.s, conv.stride_w);
      } else {
        gemm.m = k, gemm.n = c * conv.r * conv.s, gemm.k = conv.n * pq;
      }
      break;
    case ConvAlgorithm::kWinogradFused:
    case ConvAlgorithm::kWinogradNonfused: {
      const Winograd w = winograd_for(algorithm, conv);
      // Tiles cover the pass's output: the output for forward and filter, the input for data.
      const int64_t rows = pass == kBackwardDataPass ? conv.h : conv.p();
      const int64_t columns = pass == kBackwardDataPass ? conv.w : conv.q();
      const int64_t tiles = conv.n * ceil_div(rows, w.output_tile) * ceil_div(columns, w.output_tile);
      gemm.batch = w.points;
      if (pass == kForwardPass) {
        gemm.m = tiles, gemm.n = conv.k, gemm.k = conv.c;
      } else if (pass == kBackwardDataPass) {
        gemm.m = tiles, gemm.n = conv.c, gemm.k = conv.k;
      } else {
        gemm.m = conv.k, gemm.n = conv.c, gemm.k = tiles;
      }
      if (algorithm == ConvAlgorithm::kWinogradNonfused) {
        // Transformed inputs, outputs and filters are written and read once each.
        result.extra_elements = 2.0 * static_cast<double>(w.points) *
                                (static_cast<double>(tiles) * static_cast<double>(conv.c + conv.k) +
                                 static_cast<double>(conv.c) * static_cast<double>(conv.k));
      }
      break;
    }
    case ConvAlgorithm::kFft: {
      // Transforms of size next_pow2(h + 2 pad) x (that / 2 + 1) complex points; a complex GEMM
      // per point (4 real multiply-adds per complex one).
      const int64_t fh = next_power_of_two(conv.h + 2 * conv.pad_h);
      const int64_t fw = next_power_of_two(conv.w + 2 * conv.pad_w);
      const int64_t points = fh * (fw / 2 + 1);
      gemm.batch = 4 * points;
      if (pass == kForwardPass) {
        gemm.m = conv.n, gemm.n = conv.k, gemm.k = conv.c;
      } else if (pass == kBackwardDataPass) {
        gemm.m = conv.n, gemm.n = conv.c, gemm.k = conv.k;
      } else {
        gemm.m = conv.k, gemm.n = conv.c, gemm.k = conv.n;
      }
      result.extra_elements = 2.0 * 2.0 * static_cast<double>(points) *
                              (static_cast<double>(conv.n) * static_cast<double>(conv.c + conv.k) +
                               static_cast<double>(conv.c) * static_cast<double>(conv.k));
      break;
    }
  }
  return result;
}

ConvEstimate estimate_conv_with(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass, double element_bytes,
                                Precision precision, const GemmDevice& device) {
  ConvAsGemm as_gemm = conv_as_gemm(algorithm, conv, pass);
  double efficiency = device.model->conv_efficiency_for(algorithm);
  if (efficiency <= 0) efficiency = 1.0;
  ConvEstimate estimate;
  estimate.algorithm = algorithm;
  const KernelModel& model = *device.model;
  // A model fitted on no convolution (a GEMM-only table) runs them as implicit GEMMs through its
  // own GEMM parameters (-1: the GEMM's small-tile exponent), not through unfitted zeros.
  const bool conv_fitted = !model.conv_efficiency.empty();
  GemmTraffic traffic{efficiency,
                      as_gemm.tensor_elements * element_bytes,
                      as_gemm.extra_elements * element_bytes,
                      conv_fitted ? model.conv_small_tile_exponent : -1.0,
                      conv_fitted ? model.conv_fill_waves : 0.0,
                      pass == kBackwardFilterPass ? 32 : 1,
                      algorithm == ConvAlgorithm::kFft ? std::numeric_limits<double>::infinity() : 1.0};
  estimate.gemm = estimate_gemm(as_gemm.gemm, element_bytes, precision, device, traffic);
  estimate.seconds = estimate.gemm.seconds + device.model->conv_overhead_seconds;
  return estimate;
}

ConvEstimate estimate_conv(const Conv2dShape& conv, KernelPass pass, double element_bytes, Precision precision,
                           const GemmDevice& device) {
  ConvEstimate best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (ConvAlgorithm algorithm : conv_algorithms()) {
    if (!conv_algorithm_eligible(algorithm, conv, pass)) continue;
    if (algorithm != ConvAlgorithm::kImplicitGemm && device.model->conv_efficiency_for(algorithm) <= 0) continue;
    ConvEstimate estimate = estimate_conv_with(algorithm, conv, pass, element_bytes, precision, device);
    if (estimate.seconds < best.seconds) best = estimate;
  }
  return best;
}

}  // namespace placesim
