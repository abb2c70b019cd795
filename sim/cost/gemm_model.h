// GEMM time from tiles and waves: a GEMM's output is cut into tiles, the tiles run in waves of
// one per SM, and each tile's time grows with its k loop. cuBLAS picks among tile shapes and
// split-K factors; the model takes the fastest, as its heuristics aim to. Formulas and their
// sources: docs/cost-model.md ("GEMM: tiles and waves").
#pragma once

#include <cstdint>

#include "sim/cluster/kernel_model.h"
#include "sim/graph/kernel_shape.h"

namespace placesim {

/// ceil(a / b) for a >= 0 and b > 0: tiles along a dimension, waves of tiles over the SMs.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// What the GEMM model needs of the device, besides the kernel model.
struct GemmDevice {
  double peak_flops_per_second = 0;  ///< at the GEMM's precision
  double memory_bandwidth_bytes_per_second = 0;
  const KernelModel* model = nullptr;
  /// The device's measured matmul ceiling at this precision (a step's: DeviceSpec::
  /// step_matmul_ceiling_for): no kernel's math runs faster; 0 = none (checking a fit against its
  /// own table has none).
  double max_flops_per_second = 0;
};

struct GemmEstimate {
  double seconds = 0;
  int64_t tile_rows = 0;
  int64_t tile_columns = 0;
  int64_t split_k = 1;
  int64_t tiles = 0;  ///< including split-K and batch
  int64_t waves = 0;  ///< ceil(tiles / SMs)
  bool memory_bound = false;
};

/// Memory traffic of a GEMM-shaped kernel: its operands and result once each, unless the kernel
/// says otherwise (an implicit-GEMM convolution reads its tensors, not the im2col matrix).
struct GemmTraffic {
  double efficiency_scale = 1.0;  ///< multiplies the tile efficiency (a convolution algorithm's)
  double operand_bytes = -1;      ///< bytes of operands and result; < 0: (m k + k n + m n) x element bytes x batch
  double extra_bytes = 0;         ///< added traffic (transforms through memory)
  double small_tile_exponent = -1;  ///< < 0: the model's GEMM exponent
  double fill_waves = 0;            ///< waves' worth of fill and drain time
  int64_t max_split_k = 32;         ///< 1: the kernel does not split k (cuDNN's forward and data passes)
  /// The most of an SM's peak a tile's main loop reaches: 1 where the GEMM counts the kernel's
  /// real multiply-adds (a GEMM, an implicit-GEMM or Winograd convolution): no tile outruns the
  /// tensor or CUDA cores. FFT's complex GEMMs are counted at 4 real multiply-adds each, an upper
  /// bound on what cuFFT-based kernels do, so they have none.
  double max_tile_efficiency = 1.0;
};

/// The fastest (tile, split-K) for `gemm`.
GemmEstimate estimate_gemm(const GemmShape& gemm, double element_bytes, Precision precision, const GemmDevice& device,
                           const GemmTraffic& traffic = {});

/// The same for one (tile, split-K) choice, for tests and reports.
GemmEstimate estimate_gemm_with_tile(const GemmShape& gemm, double element_bytes, Precision precision,
                                     const GemmDevice& device, int64_t tile_rows, int64_t tile_columns, int64_t split_k,
                                     const GemmTraffic& traffic = {});

}  // namespace placesim
