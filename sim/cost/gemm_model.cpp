#include "sim/cost/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace placesim {
namespace {

struct Tile {
  int64_t rows;
  int64_t columns;
};

// Thread-block tiles of cuBLAS/CUTLASS GEMM kernels on Pascal to Hopper (CUTLASS's default
// threadblock shapes; cuBLAS picks among similar ones per shape), and the narrow tiles of the
// kernels cuBLAS and cuDNN use when one dimension is a few columns (GEMV-like shapes).
constexpr Tile kTiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64},
                           {64, 32},   {32, 64},   {32, 32},   {128, 16}, {16, 128}};
constexpr int64_t kSplitK[] = {1, 2, 4, 8, 16, 32};
// A split must keep at least this much of k per tile (shorter k loops are all prologue).
constexpr int64_t kMinSplitDepth = 128;

double intensity(double rows, double columns) { return rows * columns / (rows + columns); }

}  // namespace

GemmEstimate estimate_gemm_with_tile(const GemmShape& gemm, double element_bytes, Precision precision,
                                     const GemmDevice& device, int64_t tile_rows, int64_t tile_columns, int64_t split_k,
                                     const GemmTraffic& traffic) {
  const KernelModel& model = *device.model;
  GemmEstimate estimate;
  estimate.tile_rows = tile_rows;
  estimate.tile_columns = tile_columns;
  estimate.split_k = split_k;
  const int64_t output_tiles = gemm.batch * ceil_div(gemm.m, tile_rows) * ceil_div(gemm.n, tile_columns);
  estimate.tiles = output_tiles * split_k;
  const int64_t sms = std::max<int64_t>(1, model.sm_count);
  estimate.waves = ceil_div(estimate.tiles, sms);
  const double depth = static_cast<double>(ceil_div(gemm.k, split_k));
  const double small_tile = std::min(1.0, intensity(static_cast<double>(tile_rows), static_cast<double>(tile_columns)) /
                                              intensity(128, 128));
  const double exponent = traffic.small_tile_exponent >= 0 ? traffic.small_tile_exponent : model.small_tile_exponent;
  const double efficiency = std::min(
      traffic.max_tile_efficiency, model.gemm_efficiency_for(precision) * traffic.efficiency_scale * std::pow(small_tile, exponent));
  const double sm_flops_per_second = device.peak_flops_per_second / static_cast<double>(sms) * efficiency;
  const double tile_seconds = 2.0 * static_cast<double>(tile_rows * tile_columns) * (depth + model.tile_overhead_k_for(precision)) /
                              sm_flops_per_second;
  const double b = static_cast<double>(gemm.batch), m = static_cast<double>(gemm.m), n = static_cast<double>(gemm.n),
               k = static_cast<double>(gemm.k);
  double compute_seconds = (static_cast<double>(estimate.waves) + traffic.fill_waves) * tile_seconds;
  // The tile model extrapolated past its table's shapes may outrun the fastest matmul measured on
  // the device; the multiply-adds this kernel really does take at least that long.
  if (device.max_flops_per_second > 0) compute_seconds = std::max(compute_seconds, 2.0 * b * m * n * k / device.max_flops_per_second);
  double bytes = (traffic.operand_bytes >= 0 ? traffic.operand_bytes : element_bytes * b * (m * k + k * n + m * n)) +
                 traffic.extra_bytes;
  // Split-K writes fp32 partial tiles and reads them back to reduce them.
  if (split_k > 1) bytes += 2.0 * 4.0 * b * m * n * static_cast<double>(split_k);
  const double memory_seconds =
      bytes / (device.memory_bandwidth_bytes_per_second * model.memory_efficiency);
  estimate.memory_bound = memory_seconds > compute_seconds;
  estimate.seconds = std::max(compute_seconds, memory_seconds) + model.kernel_overhead_seconds;
  return estimate;
}

GemmEstimate estimate_gemm(const GemmShape& gemm, double element_bytes, Precision precision, const GemmDevice& device,
                           const GemmTraffic& traffic) {
  GemmEstimate best;
  best.seconds = std::numeric_limits<double>::infinity();
  for (const Tile& tile : kTiles) {
    for (int64_t split : kSplitK) {
      if (split > traffic.max_split_k || (split > 1 && gemm.k / split < kMinSplitDepth)) break;
      GemmEstimate estimate =
          estimate_gemm_with_tile(gemm, element_bytes, precision, device, tile.rows, tile.columns, split, traffic);
      if (estimate.seconds < best.seconds) best = estimate;
    }
  }
  return best;
}

}  // namespace placesim
