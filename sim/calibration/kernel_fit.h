// Fitting a device's kernel model (sim/cluster/kernel_model.h) to a measured kernel table, and
// checking it on the table's held-out rows. The split is fixed by each row's kernel (op, shape,
// precision), so a kernel measured twice lands on one side, and the fit never sees a held-out
// row. Method and figures: docs/cost-model.md ("Calibration from kernel tables").
#pragma once

#include <set>
#include <string>
#include <vector>

#include "sim/calibration/kernel_table.h"
#include "sim/cluster/device_spec.h"

namespace placesim {

struct KernelFitOptions {
  std::string date;                ///< YYYY-MM-DD, recorded in the fit
  std::string table;               ///< the table(s), as recorded in the fit
  std::set<Precision> precisions;  ///< rows of these precisions only; empty = all
  int held_out_modulus = 5;        ///< a row is held out when its kernel's hash % this == 0
  /// Boards of the fitted device's chip (same SM count and compute capability) whose GEMM and
  /// convolution rows the fit takes too, each timed against its own board's datasheet peak and
  /// bandwidth: efficiencies are fractions of peak, so one chip's measurements pin them down
  /// whichever board ran them. Their memory-bound rows stay out (a board's memory is its own).
  std::vector<const DeviceSpec*> siblings;
};

/// Whether a row belongs to the held-out part (fixed: a hash of op, shape and precision).
bool is_held_out(const KernelMeasurement& row, int modulus);

/// The kernel model's time for a measured row: the fastest eligible algorithm for convolutions.
double predict_kernel_seconds(const KernelMeasurement& row, const DeviceSpec& spec, const KernelModel& model);

struct KernelErrorSummary {
  std::string op;  ///< "gemm", "conv_fwd", ..., or "all"
  int64_t rows = 0;
  double median_error = 0;  ///< of |predicted / measured - 1|
  double p90_error = 0;
};

struct KernelPrediction {
  KernelMeasurement row;
  double predicted_seconds = 0;
  bool held_out = false;
  std::string predicted_algorithm;  ///< convolutions: the algorithm the model picks
};

/// The predictions as CSV (device, op, shape, precision, measured, predicted, ratio, held out,
/// the source's and the model's algorithm, source), for plots and for finding the worst rows.
std::string predictions_csv(const std::vector<KernelPrediction>& predictions);

struct KernelFit {
  KernelModel model;
  std::vector<KernelPrediction> predictions;
  std::vector<KernelErrorSummary> held_out;  ///< per op, then "all"
  std::vector<KernelErrorSummary> training;  ///< the same on the rows it was fitted on
};

/// Fits the GEMM parameters (efficiency per precision, tile overhead, small-tile exponent,
/// kernel overhead) on the GEMM rows, then each convolution algorithm family's efficiency on the
/// convolution rows, by Nelder-Mead on the mean absolute log ratio of predicted to measured time (robust).
/// `spec` gives the peak, bandwidth and memory efficiency; `sm_count` the SMs. Throws
/// InputError when the table has no usable training row for `spec.id`.
KernelFit fit_kernel_model(const std::vector<KernelMeasurement>& rows, const DeviceSpec& spec, int64_t sm_count,
                           const KernelFitOptions& options);

/// A memory-bound kernel class's fit: t = bytes / (bandwidth x efficiency) + floor.
struct MemoryFit {
  double efficiency = 0;
  double floor_seconds = 0;
};
/// A memory-bound op timed alone under `fit`: bytes / (bandwidth x efficiency) + floor.
inline double isolated_memory_seconds(double bytes, double bandwidth_bytes_per_second, const MemoryFit& fit) {
  return bytes / (bandwidth_bytes_per_second * fit.efficiency) + fit.floor_seconds;
}
/// Fits `rows` (memory-bound, timed alone) on a device of `bandwidth_bytes_per_second`, by
/// Nelder-Mead on the mean absolute log ratio; rows must not be empty.
MemoryFit fit_memory_rows(const std::vector<const KernelMeasurement*>& rows, double bandwidth_bytes_per_second);
/// Fits `model`'s pooling window-read rate per SM and its isolated floor on `rows` (pooling,
/// timed alone: pooling_kernel_seconds + floor, the bytes at `model`'s memory_efficiency), by
/// Nelder-Mead on the mean absolute log ratio; rows must not be empty, `model` must have SMs.
void fit_pooling_rows(const std::vector<const KernelMeasurement*>& rows, double bandwidth_bytes_per_second,
                      KernelModel* model);

/// Median and 90th percentile of |predicted / measured - 1| per op over `predictions` whose
/// held_out equals `held_out`, then over all of them.
std::vector<KernelErrorSummary> summarize_errors(const std::vector<KernelPrediction>& predictions, bool held_out);

}  // namespace placesim
