// KernelModel: the fitted parameters of a device's kernel-level cost model (GEMM tiles and
// waves, convolution algorithms, memory-bound kernels), as a device profile's "kernel_model"
// carries them. The formulas are in sim/cost/kernel_cost.h and docs/cost-model.md; every value
// names the measured table and the fit it came from ("fit").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/precision.h"
#include "sim/graph/op.h"

namespace placesim {

/// Convolution algorithms as cuDNN offers them (frameworks autotune: the fastest eligible runs).
enum class ConvAlgorithm {
  kImplicitGemm,      ///< the convolution as one GEMM (m = N P Q, n = K, k = C R S), no workspace
  kWinogradFused,     ///< F(2x2, 3x3): 3x3, stride 1, 16 GEMMs of 1/2.25 the multiplications
  kWinogradNonfused,  ///< F(4x4, 3x3) (36 GEMMs, 1/4 the multiplications) or F(2x2, 5x5), transforms through memory
  kFft,               ///< FFT tiling: stride 1, transforms through memory, products in the frequency domain
};
std::string to_string(ConvAlgorithm algorithm);
/// All algorithms, in the order above.
const std::vector<ConvAlgorithm>& conv_algorithms();

/// A borrowed kernel model's GEMM efficiency refitted on the board's own measured GEMMs
/// (calibrate --board-gemm-kernels): boards of one chip differ in the clock they sustain under
/// load (power limit, cooling), which the borrowed fit cannot know; every shape parameter stays
/// the borrowed model's.
struct BoardGemmRefit {
  std::string device;                 ///< the board whose rows were fitted
  std::string table;                  ///< measured kernel table(s)
  std::vector<Precision> precisions;  ///< the efficiencies set (a 16-bit row sets fp16 and bf16)
  double borrowed_efficiency = 0;     ///< what the borrowed model had for them
  /// Fixed time of one GEMM call timed alone (host dispatch in a wall-clock timing); fitted beside
  /// the efficiency and not charged in a step.
  double isolated_floor_seconds = 0;
  int64_t training_rows = 0;
  int64_t held_out_rows = 0;
  double held_out_median_error = 0;   ///< |predicted / measured - 1| on held-out rows, refitted
  double held_out_p90_error = 0;
};

/// A device's fused attention kernels (FlashAttention) against its GEMM model: the time of the
/// GEMMs an attention kernel does the work of (kernel_cost.h), divided by these efficiencies,
/// fitted on a measured attention table (calibrate --attention-kernels).
struct AttentionKernelFit {
  double forward_efficiency = 1;
  double backward_efficiency = 1;
  std::string implementation;  ///< the table's kernels that were fitted, e.g. "flash2"
  std::string table;
  std::string date;
  int64_t rows = 0;
  double median_error = 0;  ///< |predicted / measured - 1| over the fitted rows, with the fitted efficiencies
  double p90_error = 0;
};

/// Where a kernel model came from and how well it predicts the kernels it was not fitted on.
struct KernelModelFit {
  std::string table;          ///< measured kernel table(s) it was fitted on
  std::string method;         ///< e.g. "Nelder-Mead on squared log error, rows with hash % 5 != 0"
  std::string date;           ///< YYYY-MM-DD
  std::string scaled_from;    ///< a device id when transferred from another device's fit ("" = own fit)
  /// Boards of the same chip whose GEMM and convolution rows in `table` the fit took as well,
  /// each against its own datasheet (calibrate --sibling-devices).
  std::vector<std::string> sibling_devices;
  int64_t training_rows = 0;
  int64_t held_out_rows = 0;
  double held_out_median_error = 0;  ///< |predicted / measured - 1| over held-out rows
  double held_out_p90_error = 0;
  std::vector<BoardGemmRefit> board_gemm;  ///< one per precision group, set by calibrate --board-gemm-kernels
};

/// Tensor-core rows of the fit timed on inputs that draw less power than a training step's data:
/// DeepBench's fp16 kernels ran on all-zero inputs (its tensor.h converts uniform floats to
/// uint16_t, i.e. to 0), and a board at its power limit lowers its clock on random data. A
/// step's kernels of these precisions run at this fraction of the fitted compute rate
/// (kernel_cost.cpp); checking the model against its own table (kernel_fit.cpp) leaves it out.
struct InputPowerCorrection {
  std::map<Precision, double> throughput_fraction;  ///< per precision, in (0, 1]
  std::string source;                               ///< the measurement the fraction comes from
};
struct KernelModel {
  int64_t sm_count = 0;  ///< streaming multiprocessors (datasheet): tiles run in waves of this many
  /// Fraction of an SM's peak a large tile reaches in its main loop, per precision (fp16 without
  /// a fit uses bf16's and the reverse; fp8 without a fit uses bf16's, else fp16's, as an
  /// estimate; fp32's for the rest).
  std::map<Precision, double> gemm_efficiency;
  /// A tile's prologue and epilogue, as extra steps of its k loop: tile time is proportional to k + this.
  double tile_overhead_k = 0;
  /// The same per precision where the fit saw several (a tile's prologue and epilogue take about
  /// the same time whatever the format, so fewer k-steps of a faster one); absent: tile_overhead_k.
  std::map<Precision, double> tile_overhead_k_by_precision;
  /// By precision, with gemm_efficiency_for's fallbacks (fp16 <-> bf16, fp8 -> 16-bit), then the shared value.
  double tile_overhead_k_for(Precision precision) const;
  /// Efficiency of a smaller tile: gemm_efficiency x (intensity / intensity of 128x128)^this,
  /// intensity = rows x columns / (rows + columns).
  double small_tile_exponent = 0;
  double kernel_overhead_seconds = 0;  ///< fixed cost of one kernel (launch, tail)
  /// A convolution algorithm's efficiency relative to the GEMM model of its transformed GEMMs;
  /// an algorithm with no entry is not used on this device (the fit saw no kernel of it).
  std::map<ConvAlgorithm, double> conv_efficiency;
  double conv_overhead_seconds = 0;     ///< fixed cost of a convolution kernel beyond kernel_overhead_seconds
  /// cuDNN's convolution kernels are not cuBLAS's: their own small-tile exponent, and the waves'
  /// worth of time they spend filling and draining the GPU (a kernel of w waves takes w + this).
  /// A model fitted on no convolution (conv_efficiency empty) runs convolutions as implicit GEMMs
  /// with its GEMM parameters instead.
  double conv_small_tile_exponent = 0;
  double conv_fill_waves = 0;
  double memory_efficiency = 0.8;      ///< fraction of peak bandwidth a large memory-bound kernel reaches
  double memory_latency_seconds = 0;   ///< extra fixed time of a memory-bound kernel (ramp-up)
  /// Fraction of peak bandwidth a large normalisation or reduction kernel (batch/layer norm,
  /// softmax) reaches, counted in the same bytes as elementwise ones (input + output): they make
  /// extra passes; 0 = memory_efficiency.
  double reduction_memory_efficiency = 0;
  /// The fixed time of a memory-bound op timed alone (the fit's other parameter, beside each
  /// efficiency: CUDA events around one framework call include its dispatch). Kept to predict the
  /// table's rows; a step does not pay it, its ops pay the profile's per-op launch cost instead.
  double isolated_memory_floor_seconds = 0;
  double isolated_reduction_floor_seconds = 0;
  /// Window elements a pooling kernel reads per second on each SM (cuDNN's pooling reads every
  /// window from cache, so a 3x3 window runs far below the memory bandwidth): a pooling op takes
  /// max(window reads / (this x SMs), its bytes at memory_efficiency) (pooling_model.h). 0: not
  /// fitted, pooling priced as an elementwise kernel.
  double pooling_reads_per_second_per_sm = 0;
  double isolated_pooling_floor_seconds = 0;  ///< the pooling rows' fixed time alone (as the floors above)
  /// Where pooling_reads_per_second_per_sm comes from (the table it was fitted on, or the device
  /// it was borrowed from), for the line `run` prints; "" when not fitted.
  std::string pooling_source;

  /// The bandwidth fraction a memory-bound kernel of `op_kind` reaches (is_reduction_kind: its own).
  double memory_efficiency_for(OpKind op_kind) const {
    return is_reduction_kind(op_kind) && reduction_memory_efficiency > 0 ? reduction_memory_efficiency : memory_efficiency;
  }
  KernelModelFit fit;
  /// Set: the fit's rows of some precisions were timed on low-power inputs (InputPowerCorrection).
  std::optional<InputPowerCorrection> input_power;
  /// The fraction of the fitted compute rate a step's kernels of `precision` reach: 1 without a correction.
  double input_power_fraction(Precision precision) const;
  /// Set: fused attention is costed with this fit; absent: as fast as the GEMMs it replaces.
  std::optional<AttentionKernelFit> attention;

  double gemm_efficiency_for(Precision precision) const;
  /// The fitted precision whose efficiency gemm_efficiency_for(precision) returns (itself, its
  /// stand-in, or fp32), or nothing when the model has none of them.
  std::optional<Precision> gemm_efficiency_source(Precision precision) const;
  double conv_efficiency_for(ConvAlgorithm algorithm) const;
  /// A value identifying these parameters (cache keys).
  uint64_t fingerprint() const;
};

}  // namespace placesim
