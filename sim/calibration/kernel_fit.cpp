#include "sim/calibration/kernel_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "sim/calibration/nelder_mead.h"
#include "sim/core/input_error.h"
#include "sim/core/quantile.h"
#include "sim/cost/conv_model.h"
#include "sim/cost/pooling_model.h"

namespace placesim {
namespace {


constexpr double kMaxSmallTileExponent = 3.0;
constexpr double kMaxConvEfficiency = 4.0;
constexpr int64_t kMinRowsPerAlgorithm = 5;

bool is_gemm(const KernelMeasurement& row) { return row.shape.kind == KernelKind::kGemm; }

GemmDevice device_for(const DeviceSpec& spec, const KernelModel& model, Precision precision) {
  return GemmDevice{spec.peak_for(precision), spec.memory_bandwidth_bytes_per_second, &model};
}

/// |log(predicted / measured)|: a robust loss (a median-like fit), so that a few kernels the
/// model cannot describe (a 1-channel input layer's data gradient, which frameworks never run)
/// do not pull every parameter towards them.
double absolute_log_ratio(double predicted, double measured) { return std::fabs(std::log(predicted / measured)); }

/// Time of a convolution row with the algorithm the source says ran, or the fastest eligible.
double conv_row_seconds(const KernelMeasurement& row, const DeviceSpec& spec, const KernelModel& model) {
  GemmDevice device = device_for(spec, model, row.precision);
  const double bytes = gemm_operand_bytes(row.precision);
  if (row.algorithm && conv_algorithm_eligible(*row.algorithm, row.shape.conv, row.pass)) {
    return estimate_conv_with(*row.algorithm, row.shape.conv, row.pass, bytes, row.precision, device).seconds;
  }
  return estimate_conv(row.shape.conv, row.pass, bytes, row.precision, device).seconds;
}

}  // namespace

MemoryFit fit_memory_rows(const std::vector<const KernelMeasurement*>& rows, double bandwidth_bytes_per_second) {
  auto loss = [&](const std::vector<double>& x) {
    double sum = 0;
    for (const KernelMeasurement* row : rows) {
      const MemoryFit trial{from_logit(x[0]), std::exp(x[1]) * 1e-6};
      sum += absolute_log_ratio(isolated_memory_seconds(row->memory_bytes, bandwidth_bytes_per_second, trial), row->seconds);
    }
    return sum / static_cast<double>(rows.size());
  };
  NelderMeadResult result = nelder_mead(loss, {to_logit(0.7), std::log(10.0)}, 0.5, 2000);
  result = nelder_mead(loss, result.x, 0.1, 2000);
  return {from_logit(result.x[0]), std::exp(result.x[1]) * 1e-6};
}

void fit_pooling_rows(const std::vector<const KernelMeasurement*>& rows, double bandwidth_bytes_per_second,
                      KernelModel* model) {
  if (model->sm_count < 1) throw std::logic_error("fit_pooling_rows: a kernel model without SMs");
  auto set = [model](const std::vector<double>& x) {  // rate in 1e9 reads/s per SM, floor in us, as logs
    model->pooling_reads_per_second_per_sm = std::exp(x[0]) * 1e9;
    model->isolated_pooling_floor_seconds = std::exp(x[1]) * 1e-6;
  };
  auto loss = [&](const std::vector<double>& x) {
    set(x);
    double sum = 0;
    for (const KernelMeasurement* row : rows) {
      sum += absolute_log_ratio(pooling_kernel_seconds(row->window_reads, row->memory_bytes, bandwidth_bytes_per_second, *model) +
                                    model->isolated_pooling_floor_seconds,
                                row->seconds);
    }
    return sum / static_cast<double>(rows.size());
  };
  NelderMeadResult result = nelder_mead(loss, {std::log(2.0), std::log(10.0)}, 0.5, 2000);
  result = nelder_mead(loss, result.x, 0.1, 2000);
  set(result.x);
}

bool is_held_out(const KernelMeasurement& row, int modulus) {
  if (modulus <= 1) return false;
  // FNV-1a over the kernel's identity (not its line or source, so duplicates share a side).
  std::string identity = row.op + "|" + row.shape.describe() + "|" + to_string(row.precision);
  if (is_memory_bound(row)) {
    identity += "|" + row.shape_text;
  } else if (row.shape.kind == KernelKind::kConv2d) {
    const Conv2dShape& c = row.shape.conv;
    identity += "|" + std::to_string(c.pad_h) + "," + std::to_string(c.pad_w) + "," + std::to_string(c.stride_w);
  } else {
    identity += "|" + std::to_string(row.shape.gemm.transpose_a) + std::to_string(row.shape.gemm.transpose_b);
  }
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : identity) hash = (hash ^ c) * 1099511628211ull;
  return hash % static_cast<uint64_t>(modulus) == 0;
}

double predict_kernel_seconds(const KernelMeasurement& row, const DeviceSpec& spec, const KernelModel& model) {
  if (is_pooling_row(row) && model.pooling_reads_per_second_per_sm > 0) {
    return pooling_kernel_seconds(row.window_reads, row.memory_bytes, spec.memory_bandwidth_bytes_per_second, model) +
           model.isolated_pooling_floor_seconds;
  }
  if (is_memory_bound(row)) {
    // Timed alone: its bytes at the kernel kind's efficiency, plus the isolated op's fixed time.
    const MemoryFit fit{model.memory_efficiency_for(memory_op_kind(row.op)),
                        is_reduction_row(row) ? model.isolated_reduction_floor_seconds : model.isolated_memory_floor_seconds};
    return isolated_memory_seconds(row.memory_bytes, spec.memory_bandwidth_bytes_per_second, fit);
  }
  const double bytes = gemm_operand_bytes(row.precision);
  if (is_gemm(row)) return estimate_gemm(row.shape.gemm, bytes, row.precision, device_for(spec, model, row.precision)).seconds;
  return estimate_conv(row.shape.conv, row.pass, bytes, row.precision, device_for(spec, model, row.precision)).seconds;
}

std::string predictions_csv(const std::vector<KernelPrediction>& predictions) {
  std::string csv = "device,op,shape,precision,measured_seconds,predicted_seconds,ratio,held_out,source_algorithm,"
                    "model_algorithm,source\n";
  for (const auto& p : predictions) {
    const KernelMeasurement& r = p.row;
    csv += r.device + "," + r.op + "," + (is_memory_bound(r) ? r.shape_text : r.shape.describe()) + "," +
           to_string(r.precision) + "," +
           std::to_string(r.seconds) + "," + std::to_string(p.predicted_seconds) + "," +
           std::to_string(p.predicted_seconds / r.seconds) + "," + (p.held_out ? "1" : "0") + "," +
           (r.algorithm ? to_string(*r.algorithm) : "") + "," + p.predicted_algorithm + "," + r.file + ":" +
           std::to_string(r.line) + "\n";
  }
  return csv;
}

std::vector<KernelErrorSummary> summarize_errors(const std::vector<KernelPrediction>& predictions, bool held_out) {
  std::map<std::string, std::vector<double>> by_op;
  std::vector<double> all;
  for (const auto& p : predictions) {
    if (p.held_out != held_out) continue;
    double error = std::fabs(p.predicted_seconds / p.row.seconds - 1.0);
    std::string op = p.row.op == "bmm" || p.row.op == "linear" ? "gemm" : p.row.op;
    by_op[op].push_back(error);
    all.push_back(error);
  }
  std::vector<KernelErrorSummary> summaries;
  for (const auto& [op, errors] : by_op) {
    summaries.push_back({op, static_cast<int64_t>(errors.size()), quantile(errors, 0.5), quantile(errors, 0.9)});
  }
  summaries.push_back({"all", static_cast<int64_t>(all.size()), quantile(all, 0.5), quantile(all, 0.9)});
  return summaries;
}

KernelFit fit_kernel_model(const std::vector<KernelMeasurement>& rows, const DeviceSpec& spec, int64_t sm_count,
                           const KernelFitOptions& options) {
  // The board each row ran on: the fitted device, a sibling (its compute-bound rows only), or
  // none (the row is not the fit's).
  auto board_of = [&](const KernelMeasurement& row) -> const DeviceSpec* {
    if (row.device == spec.id) return &spec;
    if (is_memory_bound(row)) return nullptr;
    for (const DeviceSpec* sibling : options.siblings) {
      if (row.device == sibling->id) return sibling;
    }
    return nullptr;
  };
  // A compute-bound training row with its board, looked up once for the fits' many evaluations.
  struct BoardRow {
    const KernelMeasurement* row;
    const DeviceSpec* board;
  };
  std::vector<BoardRow> gemm_rows, conv_rows;
  std::vector<const KernelMeasurement*> elementwise_rows, reduction_rows, pooling_rows;
  std::set<Precision> gemm_precisions;
  std::map<ConvAlgorithm, int64_t> family_rows;
  int64_t training_rows = 0, held_out_rows = 0;
  for (const auto& row : rows) {
    const DeviceSpec* board = board_of(row);
    if (!board) continue;
    if (!options.precisions.empty() && !options.precisions.count(row.precision)) continue;
    if (is_held_out(row, options.held_out_modulus)) {
      ++held_out_rows;
      continue;
    }
    ++training_rows;
    if (is_pooling_row(row)) {
      pooling_rows.push_back(&row);
    } else if (is_memory_bound(row)) {
      (is_reduction_row(row) ? reduction_rows : elementwise_rows).push_back(&row);
    } else if (is_gemm(row)) {
      gemm_rows.push_back({&row, board});
      gemm_precisions.insert(row.precision);
    } else {
      conv_rows.push_back({&row, board});
      if (row.algorithm) ++family_rows[*row.algorithm];
    }
  }
  if (gemm_rows.empty()) {
    throw InputError(options.table, "", "no GEMM rows for device \"" + spec.id + "\" to fit a kernel model on");
  }
  if (!gemm_precisions.count(Precision::kFp32)) {
    // fp32's efficiency is the stand-in for every precision without its own (kernel_model.h), so
    // a profile without it would not load.
    std::string fitted;
    for (Precision precision : gemm_precisions) fitted += (fitted.empty() ? "" : ", ") + to_string(precision);
    throw InputError(options.table, "",
                     "no fp32 GEMM rows for device \"" + spec.id + "\" (only " + fitted +
                         "): a kernel model needs fp32's efficiency, the stand-in for every precision without its "
                         "own; add fp32 to --precision or a table with fp32 GEMMs of this device");
  }

  KernelModel model;
  model.sm_count = sm_count;
  model.memory_efficiency = spec.memory_efficiency;
  const std::vector<Precision> precisions(gemm_precisions.begin(), gemm_precisions.end());
  // GEMM parameters: logit(efficiency) per precision, log tile overhead (k steps) per precision
  // (one when the table has one), scaled logit of the small-tile exponent, log kernel overhead
  // (microseconds). The shared tile overhead is fp32's, else the first precision's.
  const size_t p = precisions.size();
  auto apply_gemm = [&](const std::vector<double>& x, KernelModel* m) {
    for (size_t i = 0; i < p; ++i) m->gemm_efficiency[precisions[i]] = from_logit(x[i]);
    m->tile_overhead_k_by_precision.clear();
    if (p > 1) {
      for (size_t i = 0; i < p; ++i) m->tile_overhead_k_by_precision[precisions[i]] = std::exp(x[p + i]);
    }
    m->tile_overhead_k = m->tile_overhead_k_by_precision.count(Precision::kFp32)
                             ? m->tile_overhead_k_by_precision.at(Precision::kFp32)
                             : std::exp(x[p]);
    const size_t base = p > 1 ? 2 * p - 1 : p;
    m->small_tile_exponent = kMaxSmallTileExponent * from_logit(x[base + 1]);
    m->kernel_overhead_seconds = std::exp(x[base + 2]) * 1e-6;
  };
  std::vector<double> start(p, to_logit(0.8));
  for (size_t i = 0; i < (p > 1 ? p : 1); ++i) start.push_back(std::log(16.0));
  start.push_back(to_logit(0.5 / kMaxSmallTileExponent));
  start.push_back(std::log(5.0));
  auto gemm_loss = [&](const std::vector<double>& x) {
    KernelModel trial = model;
    apply_gemm(x, &trial);
    double sum = 0;
    for (const BoardRow& r : gemm_rows) {
      sum += absolute_log_ratio(predict_kernel_seconds(*r.row, *r.board, trial), r.row->seconds);
    }
    return sum / static_cast<double>(gemm_rows.size());
  };
  NelderMeadResult gemm_fit = nelder_mead(gemm_loss, start, 0.5, 3000);
  gemm_fit = nelder_mead(gemm_loss, gemm_fit.x, 0.1, 3000);  // restart: escapes a collapsed simplex
  apply_gemm(gemm_fit.x, &model);

  if (!conv_rows.empty()) {
    // An algorithm is fitted, and so used, only when the table names it on enough kernels to
    // pin its efficiency down; implicit GEMM always is.
    std::vector<ConvAlgorithm> fitted = {ConvAlgorithm::kImplicitGemm};
    for (const auto& [algorithm, count] : family_rows) {
      if (algorithm != ConvAlgorithm::kImplicitGemm && count >= kMinRowsPerAlgorithm) fitted.push_back(algorithm);
    }
    auto apply_conv = [&](const std::vector<double>& x, KernelModel* m) {
      for (size_t i = 0; i < fitted.size(); ++i) m->conv_efficiency[fitted[i]] = kMaxConvEfficiency * from_logit(x[i]);
      m->conv_overhead_seconds = std::exp(x[fitted.size()]) * 1e-6;
      m->conv_small_tile_exponent = kMaxSmallTileExponent * from_logit(x[fitted.size() + 1]);
      m->conv_fill_waves = std::exp(x[fitted.size() + 2]);
    };
    auto conv_loss = [&](const std::vector<double>& x) {
      KernelModel trial = model;
      apply_conv(x, &trial);
      double sum = 0;
      for (const BoardRow& r : conv_rows) {
        sum += absolute_log_ratio(conv_row_seconds(*r.row, *r.board, trial), r.row->seconds);
      }
      return sum / static_cast<double>(conv_rows.size());
    };
    std::vector<double> conv_start(fitted.size(), to_logit(1.0 / kMaxConvEfficiency));
    conv_start.push_back(std::log(5.0));
    conv_start.push_back(to_logit(0.5 / kMaxSmallTileExponent));
    conv_start.push_back(std::log(0.3));
    NelderMeadResult conv_fit = nelder_mead(conv_loss, conv_start, 0.5, 3000);
    conv_fit = nelder_mead(conv_loss, conv_fit.x, 0.1, 2000);
    apply_conv(conv_fit.x, &model);
  }

  // Memory-bound ops timed alone: one (efficiency, floor) for elementwise kernels and one for
  // reductions (softmax, layernorm). The efficiency is what a step's memory-bound ops get; the
  // floor stays with the table (see kernel_model.h).
  if (!elementwise_rows.empty()) {
    const MemoryFit memory = fit_memory_rows(elementwise_rows, spec.memory_bandwidth_bytes_per_second);
    model.memory_efficiency = memory.efficiency;
    model.isolated_memory_floor_seconds = memory.floor_seconds;
  }
  if (!reduction_rows.empty()) {
    const MemoryFit reduction = fit_memory_rows(reduction_rows, spec.memory_bandwidth_bytes_per_second);
    model.reduction_memory_efficiency = reduction.efficiency;
    model.isolated_reduction_floor_seconds = reduction.floor_seconds;
  }
  // Pooling kernels timed alone: their window-read rate per SM and their floor, the bytes at the
  // elementwise efficiency just fitted (pooling_model.h).
  if (!pooling_rows.empty()) {
    fit_pooling_rows(pooling_rows, spec.memory_bandwidth_bytes_per_second, &model);
    model.pooling_source = "fitted on the pooling rows of " + options.table + (options.date.empty() ? "" : " (" + options.date + ")");
  }

  KernelFit fit;
  for (const auto& row : rows) {
    const DeviceSpec* board = board_of(row);
    if (!board) continue;
    if (!options.precisions.empty() && !options.precisions.count(row.precision)) continue;
    KernelPrediction prediction{row, predict_kernel_seconds(row, *board, model), is_held_out(row, options.held_out_modulus), ""};
    if (!is_gemm(row) && !is_memory_bound(row)) {
      prediction.predicted_algorithm = to_string(estimate_conv(row.shape.conv, row.pass, gemm_operand_bytes(row.precision),
                                                               row.precision, device_for(*board, model, row.precision))
                                                     .algorithm);
    }
    fit.predictions.push_back(std::move(prediction));
  }
  fit.held_out = summarize_errors(fit.predictions, true);
  fit.training = summarize_errors(fit.predictions, false);
  model.fit.table = options.table;
  model.fit.date = options.date;
  model.fit.method = "Nelder-Mead on the mean absolute log ratio of predicted to measured time; rows whose kernel "
                     "hashes to 0 mod " + std::to_string(options.held_out_modulus) + " held out";
  for (const DeviceSpec* sibling : options.siblings) model.fit.sibling_devices.push_back(sibling->id);
  model.fit.training_rows = training_rows;
  model.fit.held_out_rows = held_out_rows;
  model.fit.held_out_median_error = fit.held_out.back().median_error;
  model.fit.held_out_p90_error = fit.held_out.back().p90_error;
  fit.model = model;
  return fit;
}

}  // namespace placesim
