// The kernel-level cost model against hand-derived tile, wave and Winograd counts, and its fit
// against a synthetic table of known parameters (docs/cost-model.md).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sim/calibration/kernel_calibration.h"
#include "sim/calibration/kernel_fit.h"
#include "sim/cluster/cluster_json.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/calibration/kernel_table.h"
#include "sim/cost/conv_model.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/kernel_cost.h"
#include "sim/core/input_error.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

constexpr double kPeak = 10e12;      // FLOP/s
constexpr double kBandwidth = 7e11;  // bytes/s

KernelModel test_model() {
  KernelModel model;
  model.sm_count = 50;
  model.gemm_efficiency[Precision::kFp32] = 0.8;
  model.tile_overhead_k = 16;
  model.small_tile_exponent = 0.5;
  model.kernel_overhead_seconds = 4e-6;
  model.memory_efficiency = 0.8;
  model.conv_efficiency[ConvAlgorithm::kImplicitGemm] = 0.9;
  model.conv_efficiency[ConvAlgorithm::kWinogradFused] = 0.7;
  model.conv_efficiency[ConvAlgorithm::kWinogradNonfused] = 0.6;
  model.conv_overhead_seconds = 8e-6;
  model.conv_small_tile_exponent = 0.3;
  model.conv_fill_waves = 0.5;
  return model;
}

DeviceSpec test_spec(const KernelModel& model) {
  DeviceSpec spec;
  spec.id = "test-gpu";
  spec.kind = DeviceKind::kGpu;
  spec.peak_flops_per_second[Precision::kFp32] = kPeak;
  spec.memory_bandwidth_bytes_per_second = kBandwidth;
  spec.memory_efficiency = 0.8;
  spec.sm_count = model.sm_count;
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  return spec;
}

GemmShape gemm_of(int64_t m, int64_t n, int64_t k) {
  GemmShape gemm;
  gemm.m = m, gemm.n = n, gemm.k = k;
  return gemm;
}

/// A forward task of one n x n x n GEMM on one sample.
Task forward_gemm_task(int64_t n) {
  Task task;
  task.kind = TaskKind::kCompute;
  task.phase = Phase::kForward;
  task.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm_of(n, n, n)));
  task.kernel_passes = kForwardPass;
  task.kernel_samples = 1;
  return task;
}

/// test_model() with a fitted fp16 GEMM efficiency of 0.8 (the 8192^3 GEMM tests below).
KernelModel fp16_model() {
  KernelModel model = test_model();
  model.gemm_efficiency[Precision::kFp16] = 0.8;
  return model;
}

/// test_spec(model) with an fp16 peak of 8 x kPeak.
DeviceSpec fp16_spec(const KernelModel& model) {
  DeviceSpec spec = test_spec(model);
  spec.peak_flops_per_second[Precision::kFp16] = 8 * kPeak;
  return spec;
}

Conv2dShape conv3x3(int64_t n, int64_t c, int64_t hw, int64_t k) {
  Conv2dShape conv;
  conv.n = n, conv.c = c, conv.h = hw, conv.w = hw, conv.k = k, conv.r = 3, conv.s = 3, conv.pad_h = 1, conv.pad_w = 1;
  return conv;
}

TEST(GemmModel, TilesAndWavesOfA1024CubeWith128Tiles) {
  const KernelModel model = test_model();
  GemmDevice device{kPeak, kBandwidth, &model};
  GemmEstimate estimate = estimate_gemm_with_tile(gemm_of(1024, 1024, 1024), 4, Precision::kFp32, device, 128, 128, 1);
  // 1024 / 128 = 8 tiles a side: 64 tiles on 50 SMs -> ceil(64 / 50) = 2 waves.
  EXPECT_EQ(estimate.tiles, 64);
  EXPECT_EQ(estimate.waves, 2);
  // Each wave: one 128x128 tile per SM, 2 x 128 x 128 x (1024 + 16) FLOPs at peak / 50 x 0.8.
  const double tile_seconds = 2.0 * 128 * 128 * (1024 + 16) / (kPeak / 50 * 0.8);
  EXPECT_NEAR(estimate.seconds, 2 * tile_seconds + 4e-6, 1e-12);
  EXPECT_FALSE(estimate.memory_bound);
}

TEST(GemmModel, SmallTilesPayTheirLowerIntensityAndSplitKAddsPartialTraffic) {
  const KernelModel model = test_model();
  GemmDevice device{kPeak, kBandwidth, &model};
  // 64x32 tile: intensity 64 x 32 / 96 = 21.33 against 128 x 128 / 256 = 64 -> efficiency
  // 0.8 x (21.33 / 64)^0.5. m = n = 64, k = 4096 split 4: 1 x 2 tiles x 4 splits = 8 tiles, 1 wave.
  GemmEstimate estimate = estimate_gemm_with_tile(gemm_of(64, 64, 4096), 4, Precision::kFp32, device, 64, 32, 4);
  EXPECT_EQ(estimate.tiles, 8);
  EXPECT_EQ(estimate.waves, 1);
  const double efficiency = 0.8 * std::sqrt((64.0 * 32 / 96) / 64.0);
  const double compute = 2.0 * 64 * 32 * (1024 + 16) / (kPeak / 50 * efficiency);
  const double bytes = 4.0 * (64 * 4096 + 4096 * 64 + 64 * 64) + 2 * 4.0 * 64 * 64 * 4;
  const double memory = bytes / (kBandwidth * 0.8);
  EXPECT_NEAR(estimate.seconds, std::max(compute, memory) + 4e-6, 1e-12);
}

TEST(GemmModel, TheFastestChoiceIsNeverSlowerThanAnyOneTile) {
  const KernelModel model = test_model();
  GemmDevice device{kPeak, kBandwidth, &model};
  for (GemmShape gemm : {gemm_of(1760, 16, 1760), gemm_of(35, 8457, 4096), gemm_of(5124, 9124, 2560)}) {
    const double best = estimate_gemm(gemm, 4, Precision::kFp32, device).seconds;
    EXPECT_LE(best, estimate_gemm_with_tile(gemm, 4, Precision::kFp32, device, 128, 128, 1).seconds);
    EXPECT_LE(best, estimate_gemm_with_tile(gemm, 4, Precision::kFp32, device, 32, 32, 1).seconds);
  }
}

TEST(ConvModel, WinogradEligibilityFollowsFilterStrideAndPass) {
  Conv2dShape conv = conv3x3(32, 64, 56, 64);
  EXPECT_TRUE(conv_algorithm_eligible(ConvAlgorithm::kWinogradFused, conv, kForwardPass));
  EXPECT_TRUE(conv_algorithm_eligible(ConvAlgorithm::kWinogradFused, conv, kBackwardDataPass));
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kWinogradFused, conv, kBackwardFilterPass));
  EXPECT_TRUE(conv_algorithm_eligible(ConvAlgorithm::kWinogradNonfused, conv, kBackwardFilterPass));
  Conv2dShape strided = conv;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kWinogradFused, strided, kForwardPass));
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kWinogradNonfused, strided, kForwardPass));
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kFft, strided, kForwardPass));
  Conv2dShape seven = conv;
  seven.r = seven.s = 7, seven.pad_h = seven.pad_w = 3;
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kWinogradNonfused, seven, kForwardPass));
  EXPECT_TRUE(conv_algorithm_eligible(ConvAlgorithm::kImplicitGemm, seven, kForwardPass));
  Conv2dShape pointwise = conv;
  pointwise.r = pointwise.s = 1, pointwise.pad_h = pointwise.pad_w = 0;
  EXPECT_FALSE(conv_algorithm_eligible(ConvAlgorithm::kFft, pointwise, kForwardPass));
}

TEST(ConvModel, WinogradDoesFewerMultiplicationsThanTheDirectConvolution) {
  // 56 x 56 outputs: F(2x2, 3x3) covers them with 28 x 28 tiles per image and channel pair and
  // runs 16 GEMMs: 16 x 28^2 x (2 K C) = 2 K C 56^2 x 9 / 2.25. F(4x4, 3x3): 36 x 14^2 -> / 4.
  Conv2dShape conv = conv3x3(1, 64, 56, 128);
  const double direct = conv.direct_flops();
  EXPECT_DOUBLE_EQ(direct, 2.0 * 128 * 56 * 56 * 64 * 9);
  ConvAsGemm fused = conv_as_gemm(ConvAlgorithm::kWinogradFused, conv, kForwardPass);
  EXPECT_EQ(fused.gemm.batch, 16);
  EXPECT_EQ(fused.gemm.m, 28 * 28);
  EXPECT_EQ(fused.gemm.n, 128);
  EXPECT_EQ(fused.gemm.k, 64);
  EXPECT_DOUBLE_EQ(fused.gemm.flops(), direct / 2.25);
  EXPECT_EQ(fused.extra_elements, 0);
  ConvAsGemm nonfused = conv_as_gemm(ConvAlgorithm::kWinogradNonfused, conv, kForwardPass);
  EXPECT_EQ(nonfused.gemm.batch, 36);
  EXPECT_EQ(nonfused.gemm.m, 14 * 14);
  EXPECT_DOUBLE_EQ(nonfused.gemm.flops(), direct / 4);
  // Transformed input (36 x C x tiles), output (36 x K x tiles) and filter (36 x C x K), each
  // written and read.
  EXPECT_DOUBLE_EQ(nonfused.extra_elements, 2.0 * 36 * (196.0 * (64 + 128) + 64.0 * 128));
}

TEST(ConvModel, ImplicitGemmShapesOfTheThreePasses) {
  Conv2dShape conv = conv3x3(8, 64, 28, 128);
  conv.stride_h = conv.stride_w = 2;  // 28 -> 14
  ConvAsGemm forward = conv_as_gemm(ConvAlgorithm::kImplicitGemm, conv, kForwardPass);
  EXPECT_EQ(forward.gemm.m, 8 * 14 * 14);
  EXPECT_EQ(forward.gemm.n, 128);
  EXPECT_EQ(forward.gemm.k, 64 * 9);
  // Backward data: each of the 28 x 28 input pixels receives from ceil(3 / 2) x ceil(3 / 2) = 4
  // taps of each of the 128 filters.
  ConvAsGemm data = conv_as_gemm(ConvAlgorithm::kImplicitGemm, conv, kBackwardDataPass);
  EXPECT_EQ(data.gemm.m, 8 * 28 * 28);
  EXPECT_EQ(data.gemm.n, 64);
  EXPECT_EQ(data.gemm.k, 128 * 4);
  ConvAsGemm filter = conv_as_gemm(ConvAlgorithm::kImplicitGemm, conv, kBackwardFilterPass);
  EXPECT_EQ(filter.gemm.m, 128);
  EXPECT_EQ(filter.gemm.n, 64 * 9);
  EXPECT_EQ(filter.gemm.k, 8 * 14 * 14);
}

TEST(ConvModel, TheFastestFittedAlgorithmRuns) {
  const KernelModel model = test_model();
  GemmDevice device{kPeak, kBandwidth, &model};
  Conv2dShape conv = conv3x3(64, 256, 14, 256);
  ConvEstimate best = estimate_conv(conv, kForwardPass, 4, Precision::kFp32, device);
  for (ConvAlgorithm algorithm : {ConvAlgorithm::kImplicitGemm, ConvAlgorithm::kWinogradFused,
                                  ConvAlgorithm::kWinogradNonfused}) {
    EXPECT_LE(best.seconds, estimate_conv_with(algorithm, conv, kForwardPass, 4, Precision::kFp32, device).seconds);
  }
  // FFT has no fitted efficiency here: never chosen.
  EXPECT_NE(best.algorithm, ConvAlgorithm::kFft);
}

// No tile runs above the SM's peak: an implicit-GEMM convolution fitted at 1.5 x a GEMM
// efficiency of 0.8 (1.2 of peak) runs its 128 x 128 tiles at 1.0. conv3x3(64, 256, 14, 256)'s
// forward implicit GEMM is m = 64 x 14 x 14 = 12,544, n = 256, k = 256 x 9 = 2,304: 98 x 2 = 196
// tiles of 128 x 128 in ceil(196 / 50) = 4 waves (+ 0.5 fill), each tile 2 x 128 x 128 x
// (2,304 + 16) FLOPs at 10e12 / 50 x 1.0, plus the kernel's 4 us. FFT's complex GEMMs (4 real
// multiply-adds each, an upper bound) are not capped.
TEST(ConvModel, NoTileRunsAboveTheSmsPeak) {
  KernelModel model = test_model();
  model.conv_small_tile_exponent = 0;  // every tile shape at the same efficiency
  GemmDevice device{kPeak, kBandwidth, &model};
  const Conv2dShape conv = conv3x3(64, 256, 14, 256);
  const ConvAsGemm as_gemm = conv_as_gemm(ConvAlgorithm::kImplicitGemm, conv, kForwardPass);
  ASSERT_EQ(as_gemm.gemm.m, 12544);
  ASSERT_EQ(as_gemm.gemm.k, 2304);
  // The convolution's traffic as estimate_conv_with builds it, at a fitted efficiency of `scale`.
  auto tiles_of_128 = [&](double scale) {
    GemmTraffic traffic{scale, as_gemm.tensor_elements * 4, 0, 0, 0.5, 1, 1.0};
    return estimate_gemm_with_tile(as_gemm.gemm, 4, Precision::kFp32, device, 128, 128, 1, traffic);
  };
  const GemmEstimate capped = tiles_of_128(1.5);
  EXPECT_EQ(capped.tiles, 196);
  EXPECT_EQ(capped.waves, 4);
  const double tile_seconds = 2.0 * 128 * 128 * (2304 + 16) / (kPeak / 50 * 1.0);
  EXPECT_NEAR(capped.seconds, 4.5 * tile_seconds + 4e-6, 1e-12);
  EXPECT_NEAR(tiles_of_128(1.25).seconds, capped.seconds, 1e-12);               // 0.8 x 1.25 = 1.0
  EXPECT_NEAR(tiles_of_128(1.0).seconds, 4.5 * tile_seconds / 0.8 + 4e-6, 1e-12);  // 0.8: below it
  // The convolution picks its fastest tile under the same cap: 1.5 and 1.25 run alike.
  model.conv_efficiency[ConvAlgorithm::kImplicitGemm] = 1.5;
  const double at_one_and_a_half = estimate_conv_with(ConvAlgorithm::kImplicitGemm, conv, kForwardPass, 4, Precision::kFp32, device).seconds;
  model.conv_efficiency[ConvAlgorithm::kImplicitGemm] = 1.25;
  EXPECT_NEAR(estimate_conv_with(ConvAlgorithm::kImplicitGemm, conv, kForwardPass, 4, Precision::kFp32, device).seconds,
              at_one_and_a_half, 1e-12);
  // FFT: the same GEMM machinery without the cap.
  GemmTraffic fft{1.5, -1, 0, -1, 0, 1, std::numeric_limits<double>::infinity()};
  GemmTraffic exact = fft;
  exact.max_tile_efficiency = 1.0;
  const GemmShape big = gemm_of(4096, 4096, 4096);
  EXPECT_LT(estimate_gemm(big, 4, Precision::kFp32, device, fft).seconds,
            estimate_gemm(big, 4, Precision::kFp32, device, exact).seconds);
}

// A model fitted on GEMMs only (the H100's tables have no convolution) runs a convolution as the
// implicit GEMM of its forward pass through the GEMM parameters: m = N P Q, n = K, k = C R S, the
// GEMM's small-tile exponent, no fill waves, no conv overhead.
TEST(ConvModel, AModelFittedOnNoConvolutionRunsThemAsImplicitGemms) {
  KernelModel model = test_model();
  model.conv_efficiency.clear();
  model.conv_overhead_seconds = 0;
  model.conv_small_tile_exponent = 0;  // unfitted zeros, as such a profile stores them
  model.conv_fill_waves = 0;
  GemmDevice device{kPeak, kBandwidth, &model};
  Conv2dShape conv = conv3x3(32, 64, 28, 64);
  ConvEstimate estimate = estimate_conv(conv, kForwardPass, 4, Precision::kFp32, device);
  EXPECT_EQ(estimate.algorithm, ConvAlgorithm::kImplicitGemm);
  // The same GEMM with the GEMM's exponent (0.5) and the convolution's operand traffic.
  ConvAsGemm as_gemm = conv_as_gemm(ConvAlgorithm::kImplicitGemm, conv, kForwardPass);
  EXPECT_EQ(as_gemm.gemm.m, 32 * 28 * 28);
  EXPECT_EQ(as_gemm.gemm.k, 64 * 9);
  GemmTraffic traffic{1.0, as_gemm.tensor_elements * 4, as_gemm.extra_elements * 4, -1.0, 0.0, 1};
  EXPECT_DOUBLE_EQ(estimate.seconds, estimate_gemm(as_gemm.gemm, 4, Precision::kFp32, device, traffic).seconds);
  // With the exponent the profile stores (0) small tiles would pay nothing: a different time.
  traffic.small_tile_exponent = 0;
  EXPECT_NE(estimate.seconds, estimate_gemm(as_gemm.gemm, 4, Precision::kFp32, device, traffic).seconds);
}

// A fit over several precisions gives each its own tile overhead (k-steps); a precision without
// one takes the same stand-in as for its efficiency (fp16 <-> bf16, fp8 -> bf16), then the shared one.
TEST(KernelModel, TileOverheadsFollowTheEfficiencysFallbacks) {
  KernelModel model;
  model.tile_overhead_k = 40;
  model.tile_overhead_k_by_precision[Precision::kFp32] = 40;
  model.tile_overhead_k_by_precision[Precision::kBf16] = 160;
  EXPECT_DOUBLE_EQ(model.tile_overhead_k_for(Precision::kBf16), 160);
  EXPECT_DOUBLE_EQ(model.tile_overhead_k_for(Precision::kFp16), 160);
  EXPECT_DOUBLE_EQ(model.tile_overhead_k_for(Precision::kFp8), 160);
  EXPECT_DOUBLE_EQ(model.tile_overhead_k_for(Precision::kTf32), 40);
  // The GEMM's time uses it: one 128 x 128 tile of k = 64 on one SM at 1 FLOP/s per SM, efficiency
  // 1: 2 x 128 x 128 x (64 + 160) s in bf16, (64 + 40) in fp32.
  model.sm_count = 1;
  model.gemm_efficiency[Precision::kBf16] = 1;
  model.gemm_efficiency[Precision::kFp32] = 1;
  GemmDevice device{1.0, 1e30, &model};
  const GemmEstimate bf16 = estimate_gemm_with_tile(gemm_of(128, 128, 64), 2, Precision::kBf16, device, 128, 128, 1);
  const GemmEstimate fp32 = estimate_gemm_with_tile(gemm_of(128, 128, 64), 4, Precision::kFp32, device, 128, 128, 1);
  EXPECT_DOUBLE_EQ(bf16.seconds, 2.0 * 128 * 128 * (64 + 160));
  EXPECT_DOUBLE_EQ(fp32.seconds, 2.0 * 128 * 128 * (64 + 40));
}

// fp16 and bf16 run at one tensor-core rate (A100/H100 datasheets): one without a fit takes the
// other's efficiency, fp8 the 16-bit one, anything else fp32's.
TEST(KernelModel, SixteenBitFormatsShareTheirFittedEfficiency) {
  KernelModel model;
  model.gemm_efficiency[Precision::kFp32] = 0.8;
  model.gemm_efficiency[Precision::kBf16] = 0.85;
  EXPECT_DOUBLE_EQ(model.gemm_efficiency_for(Precision::kFp16), 0.85);
  EXPECT_DOUBLE_EQ(model.gemm_efficiency_for(Precision::kFp8), 0.85);
  EXPECT_DOUBLE_EQ(model.gemm_efficiency_for(Precision::kTf32), 0.8);
  model.gemm_efficiency.erase(Precision::kBf16);
  model.gemm_efficiency[Precision::kFp16] = 0.6;
  EXPECT_DOUBLE_EQ(model.gemm_efficiency_for(Precision::kBf16), 0.6);
}

TEST(KernelCost, ABackwardTaskRunsTheDataAndFilterKernelsOnItsMicroBatch) {
  const KernelModel model = test_model();
  const DeviceSpec spec = test_spec(model);
  GemmDevice device{kPeak, kBandwidth, &model};
  Task task;
  task.kind = TaskKind::kCompute;
  task.phase = Phase::kBackward;
  task.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm_of(4096, 1024, 512)));
  task.kernel_passes = kBackwardPasses;
  task.kernel_samples = 0.25;  // a quarter of the rows: m = 1024
  // dA = dC B^T: 1024 x 512 from k = 1024; dB = A^T dC: 512 x 1024 from k = 1024.
  const double expected = estimate_gemm(gemm_of(1024, 512, 1024), 4, Precision::kFp32, device).seconds +
                          estimate_gemm(gemm_of(512, 1024, 1024), 4, Precision::kFp32, device).seconds;
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kFp32, spec), expected);
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kFp32, spec), expected);  // cached
  ClusterDevice cluster_device;
  cluster_device.spec = spec;
  cluster_device.speed_factor = 2;
  EXPECT_DOUBLE_EQ(compute_seconds(task, Precision::kFp32, MemoryFormat::kNchw, cluster_device), expected / 2);
}

/// A measured fp16 GEMM row of the test device's table (its time does not enter a prediction).
KernelMeasurement fp16_gemm_row(const KernelShape& shape) {
  KernelMeasurement row;
  row.device = "test-gpu";
  row.op = "gemm";
  row.shape = shape;
  row.precision = Precision::kFp16;
  row.seconds = 1.0;
  return row;
}

// A fit whose fp16 rows ran on zero inputs (DeepBench's) carries the fraction of its compute
// rate a board keeps on random data at its power limit: a step's compute-bound kernel of that
// precision runs at 0.871 of the peak the fit saw (its tile time / 0.871), its fixed overhead and
// a memory-bound kernel's bandwidth unchanged, other precisions unchanged; checking the model
// against its own table (predict_kernel_seconds) leaves the correction out.
TEST(KernelCost, ZeroInputRowsLeaveAStepsTensorCoreKernelsAtTheRandomDataRate) {
  KernelModel model = fp16_model();
  DeviceSpec plain = fp16_spec(model);
  model.input_power = InputPowerCorrection{{{Precision::kFp16, 0.871}}, "a measurement"};
  DeviceSpec corrected = plain;
  corrected.kernel_model = std::make_shared<const KernelModel>(model);

  const Task task = forward_gemm_task(8192);
  // 64 x 64 = 4096 tiles of 128 x 128 in 82 waves of 50 SMs (the fastest tile here), each tile
  // 2 x 128 x 128 x (8192 + 16) FLOPs at 8e13 / 50 x 0.8 FLOP/s; with the correction at 0.871 of it.
  const double fp16_plain = kernel_model_seconds(task, Precision::kFp16, plain);
  const double fp16_corrected = kernel_model_seconds(task, Precision::kFp16, corrected);
  const double overhead = model.kernel_overhead_seconds;
  const double tile_seconds = 2.0 * 128 * 128 * (8192 + 16) / (8 * kPeak / 50 * 0.8);
  EXPECT_NEAR(fp16_plain, 82 * tile_seconds + overhead, 1e-12);
  EXPECT_NEAR(fp16_corrected, 82 * tile_seconds / 0.871 + overhead, 1e-12);
  // fp32 has no correction.
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kFp32, corrected), kernel_model_seconds(task, Precision::kFp32, plain));
  // The fit's own table is checked at the conditions it was measured under.
  const KernelMeasurement row = fp16_gemm_row(*task.kernel);
  EXPECT_DOUBLE_EQ(predict_kernel_seconds(row, corrected, *corrected.kernel_model),
                   predict_kernel_seconds(row, plain, *plain.kernel_model));
}

// A device's measured matmul ceiling bounds a step's GEMMs, not the fit: the same 8192^3 fp16
// GEMM as above (82 waves of 50 tiles of 2 x 128 x 128 x 8208 FLOPs at 8e13 / 50 x 0.8 FLOP/s:
// 1.103e12 / 6.4e13 FLOP/s = 17.23 ms of math) under a ceiling of 5e13 FLOP/s takes its
// 2 x 8192^3 = 1.0995e12 FLOPs / 5e13 = 21.99 ms plus the kernel's fixed overhead; a ceiling
// above the tile model's rate (7e13) and a GEMM too small to reach it change nothing; fp32 has
// no ceiling; checking the fit against its own table (predict_kernel_seconds) leaves it out.
TEST(KernelCost, AMeasuredMatmulCeilingBoundsAStepsGemmsButNotTheFitsTable) {
  KernelModel model = fp16_model();
  DeviceSpec plain = fp16_spec(model);
  DeviceSpec capped = plain;
  capped.max_achievable_matmul = std::make_shared<const MatmulCeiling>(MatmulCeiling{{{Precision::kFp16, 5e13}}, "a measurement"});
  DeviceSpec loose = plain;
  loose.max_achievable_matmul = std::make_shared<const MatmulCeiling>(MatmulCeiling{{{Precision::kFp16, 7e13}}, "a measurement"});
  const Task big = forward_gemm_task(8192), small = forward_gemm_task(256);
  const double overhead = model.kernel_overhead_seconds;
  const double tile_seconds = 2.0 * 128 * 128 * (8192 + 16) / (8 * kPeak / 50 * 0.8);
  EXPECT_NEAR(kernel_model_seconds(big, Precision::kFp16, plain), 82 * tile_seconds + overhead, 1e-12);
  EXPECT_NEAR(kernel_model_seconds(big, Precision::kFp16, capped), 2.0 * 8192 * 8192 * 8192 / 5e13 + overhead, 1e-12);
  EXPECT_DOUBLE_EQ(kernel_model_seconds(big, Precision::kFp16, loose), kernel_model_seconds(big, Precision::kFp16, plain));
  EXPECT_DOUBLE_EQ(kernel_model_seconds(small, Precision::kFp16, capped), kernel_model_seconds(small, Precision::kFp16, plain));
  EXPECT_DOUBLE_EQ(kernel_model_seconds(big, Precision::kFp32, capped), kernel_model_seconds(big, Precision::kFp32, plain));
  const KernelMeasurement row = fp16_gemm_row(*big.kernel);
  EXPECT_DOUBLE_EQ(predict_kernel_seconds(row, capped, *capped.kernel_model),
                   predict_kernel_seconds(row, plain, *plain.kernel_model));
}

// A step runs at the board's power limit, where the fit's kernels were timed in bursts: with a
// sustained rate of 5.6e13 FLOP/s measured beside a burst of 7e13 (0.8), the same 8192^3 fp16
// GEMM (82 waves of 50 tiles of 2 x 128 x 128 x 8208 FLOPs, 1.103e12 FLOPs at the fitted 6.4e13
// FLOP/s: 17.23 ms) takes 82 tile times / 0.8 = 21.54 ms: its 2 x 8192^3 / 21.54 ms = 5.1e13
// FLOP/s is under the sustained ceiling of 5.6e13, so the tile model, not the ceiling, sets it.
// Under a burst ceiling of 3e13 (max_achievable_matmul) the lower of the two ceilings bounds
// it: 2 x 8192^3 / 3e13 = 36.65 ms; with a sustained rate of 2e13 (burst 4e13) below that
// ceiling, 2 x 8192^3 / 2e13 = 54.98 ms. A precision without a sustained measurement (fp32) and
// the fit's own table (bursts) do not move.
TEST(KernelCost, ASustainedMatmulRateSlowsAStepsKernelsButNotTheFitsTable) {
  KernelModel model = fp16_model();
  DeviceSpec plain = fp16_spec(model);
  DeviceSpec sustained = plain;
  sustained.sustained_matmul =
      std::make_shared<const SustainedMatmul>(SustainedMatmul{{{Precision::kFp16, 5.6e13}}, {{Precision::kFp16, 7e13}}, "a measurement"});
  EXPECT_DOUBLE_EQ(sustained.sustained_fraction_for(Precision::kFp16), 0.8);
  EXPECT_DOUBLE_EQ(sustained.sustained_fraction_for(Precision::kFp32), 1.0);
  EXPECT_DOUBLE_EQ(sustained.step_matmul_ceiling_for(Precision::kFp16), 5.6e13);
  EXPECT_DOUBLE_EQ(sustained.step_matmul_ceiling_for(Precision::kFp32), 0.0);
  const Task task = forward_gemm_task(8192);
  const double overhead = model.kernel_overhead_seconds;
  const double tile_seconds = 2.0 * 128 * 128 * (8192 + 16) / (8 * kPeak / 50 * 0.8);
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp16, plain), 82 * tile_seconds + overhead, 1e-12);
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp16, sustained), 82 * tile_seconds / 0.8 + overhead, 1e-12);
  DeviceSpec capped = sustained;
  capped.max_achievable_matmul = std::make_shared<const MatmulCeiling>(MatmulCeiling{{{Precision::kFp16, 3e13}}, "a measurement"});
  EXPECT_DOUBLE_EQ(capped.step_matmul_ceiling_for(Precision::kFp16), 3e13);
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp16, capped), 2.0 * 8192 * 8192 * 8192 / 3e13 + overhead, 1e-12);
  capped.sustained_matmul =
      std::make_shared<const SustainedMatmul>(SustainedMatmul{{{Precision::kFp16, 2e13}}, {{Precision::kFp16, 4e13}}, "a measurement"});
  EXPECT_DOUBLE_EQ(capped.step_matmul_ceiling_for(Precision::kFp16), 2e13);
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp16, capped), 2.0 * 8192 * 8192 * 8192 / 2e13 + overhead, 1e-12);
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kFp32, sustained), kernel_model_seconds(task, Precision::kFp32, plain));
  const KernelMeasurement row = fp16_gemm_row(*task.kernel);
  EXPECT_DOUBLE_EQ(predict_kernel_seconds(row, sustained, *sustained.kernel_model),
                   predict_kernel_seconds(row, plain, *plain.kernel_model));
}

// The H200's sustained and burst rates are its own (stas00/ml-engineering's MSMF and MAMF, one
// H200 SXM at 700 W: BF16 708.5 / 841.9 TFLOPS, fp16 taking them, FP8 1288.7 / 1491.9); they
// read and write with the profile, and a sustained rate above its burst, one without its burst,
// a burst above the peak, a rate without its source or on a profile without a kernel model is
// refused with its JSON path.
TEST(DeviceProfileJson, TheSustainedMatmulRateRoundTripsAndNamesABadValue) {
  std::ifstream file(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles/devices/h200-sxm-141gb.json");
  const Json json = Json::parse(std::string(std::istreambuf_iterator<char>(file), {}));
  const DeviceSpec spec = read_device_profile(JsonReader(json, "h200.json"));
  EXPECT_NEAR(spec.sustained_fraction_for(Precision::kBf16), 708.5 / 841.9, 1e-15);
  EXPECT_NEAR(spec.sustained_fraction_for(Precision::kFp16), 708.5 / 841.9, 1e-15);
  EXPECT_NEAR(spec.sustained_fraction_for(Precision::kFp8), 1288.7 / 1491.9, 1e-15);
  EXPECT_DOUBLE_EQ(spec.sustained_fraction_for(Precision::kTf32), 1.0);  // not measured: none
  // The lower of the two ceilings: the sustained rate under the burst table's 794.5 (BF16) and 1453.4 (FP8).
  EXPECT_DOUBLE_EQ(spec.step_matmul_ceiling_for(Precision::kBf16), 708.5e12);
  EXPECT_DOUBLE_EQ(spec.step_matmul_ceiling_for(Precision::kFp8), 1288.7e12);
  const DeviceSpec again = read_device_profile(JsonReader(write_device_profile(spec), "written.json"));
  ASSERT_TRUE(again.sustained_matmul);
  EXPECT_EQ(again.sustained_matmul->sustained_flops_per_second, spec.sustained_matmul->sustained_flops_per_second);
  EXPECT_EQ(again.sustained_matmul->burst_flops_per_second, spec.sustained_matmul->burst_flops_per_second);
  EXPECT_EQ(again.sustained_matmul->source, spec.sustained_matmul->source);
  auto refusal = [](const Json& profile) {
    return testing::refusal_of([&] { read_device_profile(JsonReader(profile, "h200.json")); });
  };
  Json bad = json;
  bad["sustained_matmul"]["sustained_flops_per_second"]["bf16"] = 9e14;  // above its 841.9 TFLOPS burst
  testing::Refusal refused = refusal(bad);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.json_path, "/sustained_matmul/sustained_flops_per_second/bf16");
  EXPECT_NE(refused.message.find("above its burst"), std::string::npos) << refused.message;
  bad = json;
  bad["sustained_matmul"]["burst_flops_per_second"].erase("fp8");  // a sustained rate with no burst beside it
  refused = refusal(bad);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.json_path, "/sustained_matmul/sustained_flops_per_second/fp8");
  EXPECT_NE(refused.message.find("needs the burst rate"), std::string::npos) << refused.message;
  bad = json;
  bad["sustained_matmul"]["sustained_flops_per_second"].erase("fp8");  // a burst with no sustained rate
  refused = refusal(bad);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.json_path, "/sustained_matmul/sustained_flops_per_second");
  bad = json;
  bad["sustained_matmul"]["burst_flops_per_second"]["bf16"] = 1.2e15;  // above the 989.4 TFLOPS peak
  refused = refusal(bad);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.json_path, "/sustained_matmul/burst_flops_per_second/bf16");
  bad = json;
  bad["sustained_matmul"]["source"] = "";
  EXPECT_THROW(read_device_profile(JsonReader(bad, "h200.json")), InputError);
  bad = json;
  bad.erase("kernel_model");  // a roofline profile: nothing burst-timed to correct
  bad["sources"].erase("kernel_model");
  refused = refusal(bad);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.json_path, "/sustained_matmul");
  EXPECT_NE(refused.message.find("has no kernel_model"), std::string::npos) << refused.message;
}

// The H100's ceilings are stas00/ml-engineering's Maximum Achievable Matmul FLOPS (794.5 TFLOPS
// BF16, fp16 taking it, 1402.6 TFLOPS FP8); they read and write with the profile, and a ceiling
// above the datasheet's peak or without its source is refused with its JSON path.
TEST(DeviceProfileJson, TheMatmulCeilingRoundTripsAndNamesABadValue) {
  std::ifstream file(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles/devices/h100-sxm5-80gb.json");
  const Json json = Json::parse(std::string(std::istreambuf_iterator<char>(file), {}));
  const DeviceSpec spec = read_device_profile(JsonReader(json, "h100.json"));
  EXPECT_DOUBLE_EQ(spec.matmul_ceiling_for(Precision::kBf16), 794.5e12);
  EXPECT_DOUBLE_EQ(spec.matmul_ceiling_for(Precision::kFp16), 794.5e12);
  EXPECT_DOUBLE_EQ(spec.matmul_ceiling_for(Precision::kFp8), 1402.6e12);
  EXPECT_DOUBLE_EQ(spec.matmul_ceiling_for(Precision::kTf32), 0.0);  // not measured: none
  const DeviceSpec again = read_device_profile(JsonReader(write_device_profile(spec), "written.json"));
  ASSERT_TRUE(again.max_achievable_matmul);
  EXPECT_EQ(again.max_achievable_matmul->flops_per_second, spec.max_achievable_matmul->flops_per_second);
  EXPECT_EQ(again.max_achievable_matmul->source, spec.max_achievable_matmul->source);
  Json bad = json;
  bad["max_achievable_matmul"]["flops_per_second"]["bf16"] = 1.2e15;  // above the 989.4 TFLOPS peak
  const testing::Refusal above_peak = testing::refusal_of([&] { read_device_profile(JsonReader(bad, "h100.json")); });
  ASSERT_TRUE(above_peak.refused);
  EXPECT_EQ(above_peak.json_path, "/max_achievable_matmul/flops_per_second/bf16");
  EXPECT_NE(above_peak.message.find("above the profile's bf16 peak"), std::string::npos) << above_peak.message;
  bad = json;
  bad["max_achievable_matmul"]["flops_per_second"]["tf32"] = 4e14;  // under the tf32 peak: accepted
  EXPECT_DOUBLE_EQ(read_device_profile(JsonReader(bad, "h100.json")).matmul_ceiling_for(Precision::kTf32), 4e14);
  bad = json;
  bad["peak_flops_per_second"].erase("fp8");  // a ceiling for a precision the profile has no peak for
  const testing::Refusal no_peak = testing::refusal_of([&] { read_device_profile(JsonReader(bad, "h100.json")); });
  ASSERT_TRUE(no_peak.refused);
  EXPECT_EQ(no_peak.json_path, "/max_achievable_matmul/flops_per_second/fp8");
  EXPECT_NE(no_peak.message.find("the profile has no fp8 peak"), std::string::npos) << no_peak.message;
  bad = json;
  bad["max_achievable_matmul"]["source"] = "";
  EXPECT_THROW(read_device_profile(JsonReader(bad, "h100.json")), InputError);
}

// The correction reads and writes with the profile, and a fraction outside (0, 1] or a
// correction without its source is refused with the JSON path.
TEST(KernelModelJson, TheInputPowerCorrectionRoundTripsAndNamesABadValue) {
  KernelModel model = test_model();
  model.fit.table = "t.csv";
  model.input_power = InputPowerCorrection{{{Precision::kFp16, 0.871}}, "He 2024"};
  const Json json = write_kernel_model(model);
  const KernelModel read = read_kernel_model(JsonReader(json, "profile.json"));
  ASSERT_TRUE(read.input_power);
  EXPECT_DOUBLE_EQ(read.input_power_fraction(Precision::kFp16), 0.871);
  EXPECT_DOUBLE_EQ(read.input_power_fraction(Precision::kFp32), 1.0);
  EXPECT_EQ(read.input_power->source, "He 2024");
  EXPECT_EQ(read.fingerprint(), model.fingerprint());
  KernelModel none = test_model();
  none.fit.table = "t.csv";
  EXPECT_NE(read.fingerprint(), none.fingerprint());
  Json bad = json;
  bad["input_power"]["throughput_fraction"]["fp16"] = 1.2;
  try {
    read_kernel_model(JsonReader(bad, "profile.json"));
    FAIL() << "accepted a fraction above 1";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/input_power/throughput_fraction/fp16"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("1.2"), std::string::npos) << error.what();
  }
  bad = json;
  bad["input_power"]["source"] = "";
  EXPECT_THROW(read_kernel_model(JsonReader(bad, "profile.json")), InputError);
}

TEST(KernelCost, AnOpWithoutShapeIsMemoryBoundAtTheFittedBandwidth) {
  KernelModel model = test_model();
  model.memory_latency_seconds = 2e-6;
  const DeviceSpec spec = test_spec(model);
  Task task;
  task.op_kind = OpKind::kElementwise;
  task.flops = 1e6;
  task.memory_bytes = 12e6;
  // 12 MB at 0.8 x 700 GB/s = 21.43 us, plus 2 us latency and the 4 us kernel overhead.
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, spec), 12e6 / (kBandwidth * 0.8) + 2e-6 + 4e-6, 1e-12);
}

// Normalisations and reductions (batch/layer norm, softmax) run at their own fitted bandwidth
// fraction: 12 MB at 0.45 x 700 GB/s = 38.10 us + 4 us kernel overhead. The isolated-op floors
// of the fit are not charged. Without a reduction efficiency they take the elementwise one.
TEST(KernelCost, NormalisationsAndReductionsTakeTheirOwnBandwidthFraction) {
  KernelModel model = test_model();
  model.reduction_memory_efficiency = 0.45;
  model.isolated_memory_floor_seconds = 40e-6;
  model.isolated_reduction_floor_seconds = 50e-6;
  Task task;
  task.flops = 1e6;
  task.memory_bytes = 12e6;
  for (OpKind kind : {OpKind::kNormalization, OpKind::kReduction}) {
    task.op_kind = kind;
    EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 12e6 / (kBandwidth * 0.45) + 4e-6, 1e-12);
  }
  task.op_kind = OpKind::kElementwise;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 12e6 / (kBandwidth * 0.8) + 4e-6, 1e-12);
  model.reduction_memory_efficiency = 0;
  task.op_kind = OpKind::kNormalization;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 12e6 / (kBandwidth * 0.8) + 4e-6, 1e-12);
}


// Pooling reads every window from cache: with a fit of 1e9 window reads per second on each of
// 50 SMs (5e10/s), a 3x3 stride-1 pool of 1e6 outputs reads 9e6 elements in 180 us, where its
// 8 MB (input and output) at 0.8 x 700 GB/s would take 14.29 us: 180 + 4 us overhead. A 2x2
// stride-2 pool of the same 1e6 outputs reads 4e6 (80 us) but moves 20 MB (35.71 us): the reads
// still bind. With 2e10 reads/s per SM (1e12/s) the bytes bind: 35.71 + 4 us. Without a pooling
// fit the op is priced as before, at the elementwise bandwidth.
TEST(KernelCost, PoolingIsBoundByItsWindowReadsOrItsBytes) {
  KernelModel model = test_model();
  model.pooling_reads_per_second_per_sm = 1e9;
  model.isolated_pooling_floor_seconds = 30e-6;  // the table's, not charged in a step
  Task task;
  task.op_kind = OpKind::kPooling;
  task.flops = 9e6;  // pooling_flops: outputs x window
  task.memory_bytes = 8e6;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 9e6 / 5e10 + 4e-6, 1e-12);
  task.flops = 4e6;
  task.memory_bytes = 20e6;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 4e6 / 5e10 + 4e-6, 1e-12);
  model.pooling_reads_per_second_per_sm = 2e10;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)), 20e6 / (kBandwidth * 0.8) + 4e-6, 1e-12);
  model.pooling_reads_per_second_per_sm = 0;
  EXPECT_NEAR(kernel_model_seconds(task, Precision::kFp32, test_spec(model)),
              std::max(4e6 / (kPeak * 0.5), 20e6 / (kBandwidth * 0.8)) + 4e-6, 1e-12);
}

/// A synthetic table: the rows' times are the model's own, so the fit must recover it.
std::vector<KernelMeasurement> synthetic_rows(const DeviceSpec& spec, const KernelModel& model) {
  std::vector<KernelMeasurement> rows;
  std::mt19937 random(7);
  auto dimension = [&](int lo, int hi) { return static_cast<int64_t>(std::uniform_int_distribution<int>(lo, hi)(random)); };
  for (int i = 0; i < 150; ++i) {
    KernelMeasurement row;
    row.device = spec.id;
    row.op = "gemm";
    row.shape = KernelShape::of_gemm(gemm_of(16 * dimension(1, 300), 16 * dimension(1, 300), 16 * dimension(1, 300)));
    rows.push_back(row);
  }
  for (int i = 0; i < 60; ++i) {
    KernelMeasurement row;
    row.device = spec.id;
    row.op = "conv_fwd";
    Conv2dShape conv = conv3x3(dimension(1, 64), 32 * dimension(1, 8), 7 * dimension(1, 8), 32 * dimension(1, 8));
    if (i % 3 == 0) conv.stride_h = conv.stride_w = 2;  // implicit GEMM only
    row.shape = KernelShape::of_conv(conv);
    rows.push_back(row);
  }
  GemmDevice device{kPeak, kBandwidth, &model};
  for (auto& row : rows) {
    row.seconds = predict_kernel_seconds(row, spec, model);
    // As cuDNN's Find reports it: the algorithm that ran (the fastest).
    if (row.shape.kind == KernelKind::kConv2d) {
      row.algorithm = estimate_conv(row.shape.conv, row.pass, 4, Precision::kFp32, device).algorithm;
    }
  }
  return rows;
}

TEST(KernelFit, RecoversTheParametersOfASyntheticTable) {
  const KernelModel truth = test_model();
  DeviceSpec spec = test_spec(truth);
  std::vector<KernelMeasurement> rows = synthetic_rows(spec, truth);
  KernelFitOptions options;
  options.table = "synthetic";
  KernelFit fit = fit_kernel_model(rows, spec, truth.sm_count, options);
  EXPECT_NEAR(fit.model.gemm_efficiency_for(Precision::kFp32), 0.8, 0.8 * 0.02);
  EXPECT_NEAR(fit.model.kernel_overhead_seconds, 4e-6, 4e-6 * 0.05);
  EXPECT_NEAR(fit.model.tile_overhead_k, 16, 16 * 0.1);
  EXPECT_NEAR(fit.model.conv_efficiency_for(ConvAlgorithm::kImplicitGemm), 0.9, 0.9 * 0.05);
  EXPECT_NEAR(fit.model.conv_overhead_seconds, 8e-6, 8e-6 * 0.1);
  EXPECT_LT(fit.held_out.back().p90_error, 0.02);
  EXPECT_GT(fit.model.fit.held_out_rows, 20);
  EXPECT_EQ(fit.model.fit.held_out_rows + fit.model.fit.training_rows, static_cast<int64_t>(rows.size()));
}

// A sibling board (the same chip) with half the peak ran the GEMMs: timed against its own peak
// they pin the efficiency down at the truth's 0.8, while against the fitted board's peak they
// would read as 0.4. Its memory-bound rows stay out (a board's memory is its own): a sibling
// elementwise row at a tenth of the model's time would otherwise pull the bandwidth fraction up.
TEST(KernelFit, ASiblingBoardsRowsCountAgainstItsOwnPeak) {
  const KernelModel truth = test_model();
  const DeviceSpec spec = test_spec(truth);
  DeviceSpec sibling = spec;
  sibling.id = "sibling";
  sibling.peak_flops_per_second[Precision::kFp32] = kPeak / 2;
  std::vector<KernelMeasurement> rows = synthetic_rows(sibling, truth);
  for (KernelMeasurement& row : rows) row.device = "sibling";
  KernelMeasurement memory;
  memory.device = "sibling";
  memory.op = "elementwise";
  memory.memory_bytes = 1e9;
  memory.seconds = 0.1 * 1e9 / (kBandwidth * truth.memory_efficiency);
  rows.push_back(memory);
  KernelFitOptions options;
  options.table = "synthetic";
  EXPECT_THROW(fit_kernel_model(rows, spec, truth.sm_count, options), InputError);  // no row of its own
  options.siblings = {&sibling};
  KernelFit fit = fit_kernel_model(rows, spec, truth.sm_count, options);
  EXPECT_NEAR(fit.model.gemm_efficiency_for(Precision::kFp32), 0.8, 0.8 * 0.02);
  EXPECT_NEAR(fit.model.memory_efficiency, spec.memory_efficiency, 1e-12);
  EXPECT_EQ(fit.model.fit.training_rows + fit.model.fit.held_out_rows, static_cast<int64_t>(rows.size()) - 1);
  ASSERT_EQ(fit.model.fit.sibling_devices.size(), 1u);
  EXPECT_EQ(fit.model.fit.sibling_devices[0], "sibling");
  // fp32's efficiency is every other precision's stand-in: a fit without fp32 GEMMs is refused
  // before it writes a profile that would not load.
  for (KernelMeasurement& row : rows) row.precision = Precision::kTf32;
  try {
    fit_kernel_model(rows, spec, truth.sm_count, options);
    ADD_FAILURE() << "a fit on tf32 rows alone was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("no fp32 GEMM rows for device \"" + spec.id + "\" (only tf32)"),
              std::string::npos)
        << error.what();
  }
  // calibrate --sibling-devices takes only boards of the same chip (SM count, compute capability).
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  EXPECT_THROW(calibrate_from_kernel_tables({std::filesystem::path(PLACESIM_SOURCE_DIR) /
                                             "hardware_profiles/kernels/vidur_a100-pcie-80gb.csv"},
                                            "a100-pcie-80gb", {}, catalog, "today", {}, {"v100-sxm2-16gb"}),
               InputError);
}

// The roofline (no kernel model) prices a normalisation at its own bandwidth fraction too:
// 12 MB at 0.7 x 700 GB/s = 24.49 us, against 21.43 us at 0.8 for an elementwise op, + 5 us launch.
TEST(KernelCost, TheRooflineTakesTheReductionBandwidthFractionForNormalisations) {
  ClusterDevice device;
  device.spec.id = "roofline-gpu";
  device.spec.kind = DeviceKind::kGpu;
  device.spec.peak_flops_per_second[Precision::kFp32] = kPeak;
  device.spec.memory_bandwidth_bytes_per_second = kBandwidth;
  device.spec.memory_efficiency = 0.8;
  device.spec.reduction_memory_efficiency = 0.7;
  device.spec.kernel_launch_overhead_seconds = 5e-6;
  Task task;
  task.flops = 1e3;
  task.memory_bytes = 12e6;
  task.op_kind = OpKind::kNormalization;
  EXPECT_NEAR(compute_seconds(task, Precision::kFp32, MemoryFormat::kNchw, device), 12e6 / (kBandwidth * 0.7) + 5e-6, 1e-12);
  task.op_kind = OpKind::kElementwise;
  EXPECT_NEAR(compute_seconds(task, Precision::kFp32, MemoryFormat::kNchw, device), 12e6 / (kBandwidth * 0.8) + 5e-6, 1e-12);
}

// A roofline profile fitted on a sibling board's memory-bound rows: NeuSight-style rows of
// "a100-pcie-80gb" (1,935 GB/s) made as t = bytes / (1935e9 x e) + floor with e = 0.8, 20 us
// (elementwise) and 0.6, 30 us (softmax, layernorm); the A100 SXM4 80 GB profile gets 0.8 and 0.6.
TEST(KernelFit, ARooflineProfileTakesItsSiblingsMeasuredBandwidthFractions) {
  const std::filesystem::path root = std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles";
  const HardwareCatalog catalog(root);
  auto directory = std::filesystem::temp_directory_path() / ("memory_fit_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto table = directory / "memory.csv";
  {
    std::ofstream out(table);
    out << "device,op,shape,precision,algorithm,seconds,source\n";
    for (int i = 0; i < 60; ++i) {
      const double elements = std::pow(2.0, 10 + i % 20) * (1 + i / 20);
      const std::string op = i % 3 == 0 ? "elementwise" : i % 3 == 1 ? "softmax" : "layernorm";
      const bool reduction = op != "elementwise";
      const double bytes = 4 * elements * (reduction ? 2 : 3);
      const double seconds = bytes / (1935e9 * (reduction ? 0.6 : 0.8)) + (reduction ? 30e-6 : 20e-6);
      out << "a100-pcie-80gb," << op << ",elements=" << static_cast<int64_t>(elements)
          << (reduction ? ";rows=1;cols=1" : ";fn=add;tensor_inputs=2") << ",fp32,," << seconds << ",synthetic\n";
    }
    // Pooling rows, bound by their window reads, are no evidence of a bandwidth fraction: kept out
    // (100x the time their bytes would take would pull the elementwise fraction far down).
    for (int i = 0; i < 20; ++i) {
      const int64_t side = 16 + 8 * i;
      const double seconds = 100 * 4.0 * 64 * 64 * side * side * 2 / (1935e9 * 0.8);
      out << "a100-pcie-80gb,pooling,n=64;c=64;h=" << side << ";w=" << side
          << ";r=3;s=3;pad_h=1;pad_w=1;stride_h=1;stride_w=1;mode=avg,fp32,," << seconds << ",synthetic\n";
    }
  }
  MemoryCalibration fit = calibrate_memory_from_kernel_tables({table}, "a100-sxm4-80gb", "a100-pcie-80gb", catalog, "today");
  EXPECT_NEAR(fit.elementwise.efficiency, 0.8, 0.8 * 0.01);
  EXPECT_NEAR(fit.reduction.efficiency, 0.6, 0.6 * 0.01);
  EXPECT_NEAR(fit.elementwise.floor_seconds, 20e-6, 20e-6 * 0.03);
  EXPECT_NEAR(fit.profile.at("reduction_memory_efficiency").get<double>(), fit.reduction.efficiency, 1e-12);
  EXPECT_NE(fit.profile.at("sources").at("memory_efficiency").get<std::string>().find("a100-pcie-80gb's 1935 GB/s"),
            std::string::npos);
  // A profile with a kernel model is fitted with --from-kernels and --memory-kernels instead.
  EXPECT_THROW(calibrate_memory_from_kernel_tables({table}, "v100-sxm2-16gb", "a100-pcie-80gb", catalog, "today"),
               InputError);
  std::filesystem::remove_all(directory);
}

// calibrate --check-kernels: a fitted model's errors on another source's rows of the same device.
// Three GEMMs measured 1.25x, 1/0.8x and 1/1.1x the model's time (errors 0.2, 0.25 and 0.1: median
// 0.2) and one elementwise row measured at half the model's time (error 1.0). Rows the fit saw
// are left out: a table's memory-bound rows when it was a --memory-kernels table, all of it when
// it was a --from-kernels table.
TEST(KernelModelCheck, ErrorsAreOnlyOnRowsTheFitNeverSaw) {
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  const DeviceSpec& spec = catalog.device("v100-sxm2-16gb", nowhere);
  ASSERT_TRUE(spec.kernel_model);
  auto directory = std::filesystem::temp_directory_path() / ("model_check_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  const auto table = directory / "other_lab.csv";
  const std::vector<std::string> shapes = {"gemm,m=512;n=512;k=512;ta=0;tb=0", "gemm,m=4096;n=1024;k=2048;ta=0;tb=1",
                                           "gemm,m=64;n=3072;k=768;ta=0;tb=0",
                                           "elementwise,elements=1048576;fn=add;tensor_inputs=2"};
  const std::vector<double> measured_over_predicted = {1.25, 1 / 0.8, 1 / 1.1, 0.5};
  auto write = [&](const std::vector<double>& seconds) {
    std::ofstream out(table);
    out << "device,op,shape,precision,algorithm,seconds,source\n" << std::setprecision(17);
    for (size_t i = 0; i < shapes.size(); ++i) {
      out << "v100-sxm2-16gb," << shapes[i] << ",fp32,," << seconds[i] << ",synthetic\n";
    }
  };
  write(std::vector<double>(shapes.size(), 1e-3));
  std::vector<double> seconds;
  for (const KernelMeasurement& row : read_kernel_table(table, "v100-sxm2-16gb").rows) {
    seconds.push_back(predict_kernel_seconds(row, spec, *spec.kernel_model));
  }
  ASSERT_EQ(seconds.size(), shapes.size());
  for (size_t i = 0; i < seconds.size(); ++i) seconds[i] *= measured_over_predicted[i];
  write(seconds);

  KernelModelCheck check = check_kernel_model(*spec.kernel_model, spec, {table}, {}, catalog);
  ASSERT_EQ(check.errors.size(), 3u);  // elementwise, gemm, all
  EXPECT_EQ(check.errors[1].op, "gemm");
  EXPECT_EQ(check.errors[1].rows, 3);
  EXPECT_NEAR(check.errors[1].median_error, 0.2, 1e-9);
  EXPECT_EQ(check.errors[0].op, "elementwise");
  EXPECT_NEAR(check.errors[0].median_error, 1.0, 1e-9);

  check = check_kernel_model(*spec.kernel_model, spec, {table}, {}, catalog, {}, {table});
  ASSERT_EQ(check.errors.size(), 2u);  // gemm, all
  EXPECT_EQ(check.errors[0].rows, 3);
  EXPECT_EQ(check.skipped.at("elementwise: the fit saw these rows of other_lab.csv"), 1);
  EXPECT_THROW(check_kernel_model(*spec.kernel_model, spec, {table}, {}, catalog, {table}, {}), InputError);
  std::filesystem::remove_all(directory);
}

// --kernel-model-from: efficiencies carry over as fractions of peak; the SM count is the target's;
// a target with measured bandwidth fractions of its own (reduction_memory_efficiency in its
// profile) keeps them, one without takes the lender's.
TEST(KernelModelTransfer, BorrowsTheModelAndKeepsTheTargetsMeasuredBandwidthFractions) {
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  const DeviceSpec& lender = catalog.device("v100-sxm2-16gb", nowhere);
  ASSERT_TRUE(lender.kernel_model);
  for (const std::string target_id : {"a100-sxm4-40gb", "k80"}) {
    SCOPED_TRACE(target_id);
    const DeviceSpec& target = catalog.device(target_id, nowhere);
    const Json profile = transfer_kernel_model("v100-sxm2-16gb", target_id, catalog, "2026-12-02");
    const KernelModel model = read_kernel_model(JsonReader(profile.at("kernel_model"), "test"));
    EXPECT_EQ(model.sm_count, target.sm_count);
    EXPECT_EQ(model.fit.scaled_from, "v100-sxm2-16gb");
    EXPECT_EQ(model.gemm_efficiency, lender.kernel_model->gemm_efficiency);
    EXPECT_EQ(model.conv_efficiency, lender.kernel_model->conv_efficiency);
    const std::string source = profile.at("sources").at("kernel_model").get<std::string>();
    if (target.reduction_memory_efficiency > 0) {  // the A100 SXM4 40GB: fitted on NeuSight's A100 PCIe 40GB
      EXPECT_EQ(model.memory_efficiency, target.memory_efficiency);
      EXPECT_EQ(model.reduction_memory_efficiency, target.reduction_memory_efficiency);
      EXPECT_NE(source.find("its own measured bandwidth fractions"), std::string::npos) << source;
    } else {
      EXPECT_EQ(model.memory_efficiency, lender.kernel_model->memory_efficiency);
      EXPECT_EQ(source.find("its own measured bandwidth fractions"), std::string::npos) << source;
    }
  }
  EXPECT_GT(catalog.device("a100-sxm4-40gb", nowhere).reduction_memory_efficiency, 0);
  EXPECT_EQ(catalog.device("k80", nowhere).reduction_memory_efficiency, 0);
}

// Memory-bound rows timed alone (t = bytes / (700 GB/s x e) + floor): elementwise at e = 0.85 with a
// 30 us floor, reductions at e = 0.5 with 45 us, over 1 KB .. 1 GB. The fit recovers all four and
// leaves the GEMM rows' parameters as they were.
TEST(KernelFit, RecoversTheMemoryBoundParametersOfASyntheticTable) {
  const KernelModel truth = test_model();
  DeviceSpec spec = test_spec(truth);
  std::vector<KernelMeasurement> rows = synthetic_rows(spec, truth);
  for (int i = 0; i < 80; ++i) {
    KernelMeasurement row;
    row.device = spec.id;
    const bool reduction = i % 2 == 1;
    row.op = reduction ? (i % 4 == 1 ? "softmax" : "layernorm") : "elementwise";
    row.memory_bytes = 1e3 * std::pow(10.0, 6.0 * i / 79.0);
    row.shape_text = "elements=" + std::to_string(i);
    row.seconds = row.memory_bytes / (kBandwidth * (reduction ? 0.5 : 0.85)) + (reduction ? 45e-6 : 30e-6);
    rows.push_back(row);
  }
  KernelFitOptions options;
  options.table = "synthetic";
  KernelFit fit = fit_kernel_model(rows, spec, truth.sm_count, options);
  EXPECT_NEAR(fit.model.memory_efficiency, 0.85, 0.85 * 0.01);
  EXPECT_NEAR(fit.model.reduction_memory_efficiency, 0.5, 0.5 * 0.01);
  EXPECT_NEAR(fit.model.isolated_memory_floor_seconds, 30e-6, 30e-6 * 0.02);
  EXPECT_NEAR(fit.model.isolated_reduction_floor_seconds, 45e-6, 45e-6 * 0.02);
  EXPECT_NEAR(fit.model.gemm_efficiency_for(Precision::kFp32), 0.8, 0.8 * 0.02);
  // Held out by their shape cell: some of each kind on both sides.
  int held_out_memory = 0;
  for (const KernelPrediction& p : fit.predictions) held_out_memory += p.held_out && is_memory_bound(p.row);
  EXPECT_GT(held_out_memory, 5);
  EXPECT_LT(held_out_memory, 40);
}

// The fit recovers a known pooling rate and floor from rows generated with them (windows 2x2 to
// 3x3, strides 1 and 2, sizes over three decades, so that reads and bytes each bind somewhere),
// and the rate and floor round-trip through the profile JSON.
TEST(KernelFit, RecoversThePoolingParametersOfASyntheticTable) {
  KernelModel truth = test_model();
  truth.pooling_reads_per_second_per_sm = 2.5e9;
  truth.isolated_pooling_floor_seconds = 7e-6;
  const DeviceSpec spec = test_spec(truth);
  std::vector<KernelMeasurement> rows = synthetic_rows(spec, truth);
  for (int i = 0; i < 80; ++i) {
    KernelMeasurement row;
    row.device = spec.id;
    row.op = "pooling";
    const double window = i % 2 ? 9 : 4, stride = i % 4 < 2 ? 1 : 2;
    const double outputs = 1e3 * std::pow(10.0, 3.0 * i / 79.0);
    row.window_reads = outputs * window;
    row.memory_bytes = 4 * outputs * (1 + stride * stride);
    row.shape_text = "pool=" + std::to_string(i);
    row.seconds = std::max(row.window_reads / (2.5e9 * 50), row.memory_bytes / (kBandwidth * 0.8)) + 7e-6;
    rows.push_back(row);
  }
  KernelFitOptions options;
  options.table = "synthetic";
  const KernelFit fit = fit_kernel_model(rows, spec, truth.sm_count, options);
  EXPECT_NEAR(fit.model.pooling_reads_per_second_per_sm, 2.5e9, 2.5e9 * 0.01);
  EXPECT_NEAR(fit.model.isolated_pooling_floor_seconds, 7e-6, 7e-6 * 0.02);
  EXPECT_EQ(fit.model.pooling_source, "fitted on the pooling rows of synthetic");  // no date given
  const KernelModel read = read_kernel_model(JsonReader(write_kernel_model(fit.model), "profile.json"));
  EXPECT_EQ(read.pooling_reads_per_second_per_sm, fit.model.pooling_reads_per_second_per_sm);
  EXPECT_EQ(read.isolated_pooling_floor_seconds, fit.model.isolated_pooling_floor_seconds);
  EXPECT_EQ(read.pooling_source, fit.model.pooling_source);
  EXPECT_EQ(read.fingerprint(), fit.model.fingerprint());
  // A rate without its source is refused, naming the key.
  Json unsourced = write_kernel_model(fit.model);
  unsourced.erase("pooling_source");
  try {
    read_kernel_model(JsonReader(unsourced, "profile.json"));
    FAIL() << "a pooling rate without its source was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("pooling_source"), std::string::npos) << error.what();
  }
}

TEST(KernelFit, HeldOutRowsNeverReachTheFit) {
  const KernelModel truth = test_model();
  DeviceSpec spec = test_spec(truth);
  std::vector<KernelMeasurement> rows = synthetic_rows(spec, truth);
  KernelFitOptions options;
  options.table = "synthetic";
  KernelFit clean = fit_kernel_model(rows, spec, truth.sm_count, options);
  for (auto& row : rows) {
    if (is_held_out(row, options.held_out_modulus)) row.seconds *= 10;  // corrupt only the held-out part
  }
  KernelFit corrupted = fit_kernel_model(rows, spec, truth.sm_count, options);
  EXPECT_EQ(clean.model.fingerprint(), corrupted.model.fingerprint());
  // ... and the check sees it: predictions 1/10 of the corrupted times, |0.1 - 1| = 0.9.
  EXPECT_NEAR(corrupted.held_out.back().median_error, 0.9, 0.01);
}

TEST(KernelTable, ReadsRowsAndNamesTheLineAndColumnOfABadOne) {
  auto directory = std::filesystem::temp_directory_path() / ("kernel_table_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  auto path = directory / "table.csv";
  {
    std::ofstream out(path);
    out << "device,op,shape,precision,algorithm,seconds,source\n"
        << "gpu,gemm,m=1760;n=16;k=1760;ta=0;tb=1,fp32,cublas,5.5e-05,a source, with a comma\n"
        << "gpu,conv_fwd,n=8;c=64;h=56;w=56;k=64;r=3;s=3;pad_h=1;pad_w=1;stride_h=1;stride_w=1,fp32,WINOGRAD,1e-4,s\n"
        << "gpu,elementwise,elements=1000;fn=add;tensor_inputs=2,fp32,,1e-5,s\n"
        << "gpu,softmax,elements=500;rows=10;cols=50,fp32,,1e-5,s\n"
        << "gpu,pooling,n=2;c=3;h=8;w=8;r=3;s=3;pad_h=1;pad_w=1;stride_h=2;stride_w=2;mode=max,fp32,,1e-5,s\n"
        << "gpu,dropout,elements=500,fp32,,1e-5,s\n"
        << "other,gemm,m=1;n=1;k=1,fp32,cublas,1e-5,s\n";
  }
  KernelTable table = read_kernel_table(path, "gpu");
  ASSERT_EQ(table.rows.size(), 5u);
  // A 3x3 window, stride 2, padding 1 over 2 x 3 x 8 x 8: 4 x 4 outputs per channel, 96 in all,
  // 96 x 9 = 864 window reads; bytes 4 B x (384 inputs + 96 outputs) = 1920.
  EXPECT_TRUE(is_pooling_row(table.rows[4]));
  EXPECT_EQ(table.rows[4].window_reads, 864);
  EXPECT_EQ(table.rows[4].memory_bytes, 1920);
  EXPECT_FALSE(is_reduction_row(table.rows[4]));
  // Memory-bound rows carry their bytes: 4 B x 1000 x (2 inputs + 1 output); softmax 4 x 500 x 2.
  EXPECT_EQ(table.rows[2].memory_bytes, 12000);
  EXPECT_FALSE(is_reduction_row(table.rows[2]));
  EXPECT_EQ(table.rows[3].memory_bytes, 4000);
  EXPECT_TRUE(is_reduction_row(table.rows[3]));
  EXPECT_EQ(table.skipped.at("dropout: neither a GEMM, a convolution nor a memory-bound op"), 1);
  EXPECT_EQ(table.rows[0].shape.gemm.k, 1760);
  EXPECT_TRUE(table.rows[0].shape.gemm.transpose_b);
  EXPECT_EQ(table.rows[0].source, "a source, with a comma");
  EXPECT_EQ(table.rows[1].algorithm, ConvAlgorithm::kWinogradFused);
  EXPECT_EQ(table.rows[1].line, 3);
  EXPECT_EQ(table.skipped.size(), 1u);  // the dropout row; the other device's rows are not counted
  {
    std::ofstream out(path);
    out << "device,op,shape,precision,algorithm,seconds,source\n"
        << "gpu,gemm,m=1760;n=0;k=1760,fp32,cublas,5.5e-05,s\n";
  }
  try {
    read_kernel_table(path, "gpu");
    FAIL() << "a zero dimension was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("line 2, column shape"), std::string::npos) << error.what();
  }
  std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace placesim
