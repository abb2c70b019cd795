#include "sim/calibration/board_gemm_calibration.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/calibration/kernel_calibration.h"
#include "sim/calibration/nelder_mead.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

bool is_16_bit(Precision precision) { return precision == Precision::kFp16 || precision == Precision::kBf16; }

/// The precisions whose efficiency a row of `precision` sets: itself, and the other 16-bit
/// format where the board's datasheet gives both the same rate (one tensor-core unit).
std::vector<Precision> group_of(Precision precision, const DeviceSpec& spec) {
  if (!is_16_bit(precision)) return {precision};
  const Precision other = precision == Precision::kFp16 ? Precision::kBf16 : Precision::kFp16;
  const auto rated = spec.peak_flops_per_second.find(other);
  if (rated == spec.peak_flops_per_second.end() || rated->second != spec.peak_for(precision)) return {precision};
  return {std::min(precision, other), std::max(precision, other)};
}

KernelModel with_efficiency(KernelModel model, const std::vector<Precision>& precisions, double efficiency) {
  for (Precision precision : precisions) model.gemm_efficiency[precision] = efficiency;
  return model;
}

std::string names_of(const std::vector<Precision>& precisions) {
  std::string names;
  for (Precision precision : precisions) names += std::string(names.empty() ? "" : "/") + to_string(precision);
  return names;
}

}  // namespace

BoardGemmCalibration calibrate_board_gemm_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                             const std::string& device_id,
                                                             const HardwareCatalog& catalog, const std::string& date) {
  const Json option = device_id;
  const DeviceSpec& spec = catalog.device(device_id, JsonReader(option, "--device"));
  if (!spec.kernel_model || spec.kernel_model->fit.scaled_from.empty()) {
    throw InputError("--device", "",
                     "\"" + device_id + "\" has " +
                         (spec.kernel_model ? "a kernel model fitted on its own tables: refit it with --from-kernels"
                                            : "no kernel model: borrow one first with --kernel-model-from") +
                         " (--board-gemm-kernels refits a borrowed model's GEMM efficiency)");
  }
  const KernelModel& borrowed = *spec.kernel_model;
  std::map<std::vector<Precision>, std::vector<KernelMeasurement>> groups;
  std::string table_names;
  for (const auto& path : tables) {
    for (KernelMeasurement& row : read_kernel_table(path, device_id).rows) {
      if (row.shape.kind != KernelKind::kGemm || is_memory_bound(row)) continue;
      groups[group_of(row.precision, spec)].push_back(std::move(row));
    }
    table_names += std::string(table_names.empty() ? "" : " + ") + fitted_table_name(path, catalog);
  }
  if (groups.empty()) {
    throw InputError(tables.empty() ? "--board-gemm-kernels" : tables.front().string(), "",
                     "no GEMM rows of device \"" + device_id + "\" to fit its efficiency on");
  }
  BoardGemmCalibration calibration;
  // Refits of precisions this run does not cover stay; those it covers are replaced, and their
  // precisions go back to the efficiency first borrowed: refitting a refitted profile compares
  // with, and records, the lender's efficiency, not the earlier refit's.
  KernelModel lent = borrowed;
  std::vector<BoardGemmRefit> kept;
  for (const BoardGemmRefit& earlier : borrowed.fit.board_gemm) {
    const bool replaced = std::any_of(groups.begin(), groups.end(), [&](const auto& group) {
      return std::any_of(group.first.begin(), group.first.end(), [&](Precision precision) {
        return std::find(earlier.precisions.begin(), earlier.precisions.end(), precision) != earlier.precisions.end();
      });
    });
    if (replaced) {
      lent = with_efficiency(lent, earlier.precisions, earlier.borrowed_efficiency);
    } else {
      kept.push_back(earlier);
    }
  }
  KernelModel model = lent;
  std::vector<KernelPrediction> before;
  for (const auto& [precisions, rows] : groups) {
    std::vector<const KernelMeasurement*> training;
    for (const KernelMeasurement& row : rows) {
      if (!is_held_out(row, 5)) training.push_back(&row);
    }
    if (training.empty()) {
      throw InputError(table_names, "", "every " + names_of(precisions) + " GEMM row of \"" + device_id +
                                            "\" is held out: nothing to fit on");
    }
    const double borrowed_efficiency = lent.gemm_efficiency_for(precisions.front());
    auto loss = [&](const std::vector<double>& x) {
      const KernelModel trial = with_efficiency(model, precisions, from_logit(x[0]));
      const double floor_seconds = std::exp(x[1]) * 1e-6;
      double sum = 0;
      for (const KernelMeasurement* row : training) {
        sum += std::fabs(std::log((predict_kernel_seconds(*row, spec, trial) + floor_seconds) / row->seconds));
      }
      return sum / static_cast<double>(training.size());
    };
    // A fixed start (not the current value), so that refitting a refitted profile gives it back.
    NelderMeadResult result = nelder_mead(loss, {to_logit(0.8), std::log(10.0)}, 0.5, 2000);
    result = nelder_mead(loss, result.x, 0.1, 2000);  // restart: escapes a collapsed simplex
    const double efficiency = from_logit(result.x[0]);
    BoardGemmRefit refit;
    refit.device = device_id;
    refit.table = table_names;
    refit.precisions = precisions;
    refit.borrowed_efficiency = borrowed_efficiency;
    refit.isolated_floor_seconds = std::exp(result.x[1]) * 1e-6;
    refit.training_rows = static_cast<int64_t>(training.size());
    model = with_efficiency(model, precisions, efficiency);
    std::vector<KernelPrediction> group_predictions;
    for (const KernelMeasurement& row : rows) {
      const bool held_out = is_held_out(row, 5);
      const double floor_seconds = refit.isolated_floor_seconds;
      before.push_back({row, predict_kernel_seconds(row, spec, lent) + floor_seconds, held_out, ""});
      group_predictions.push_back({row, predict_kernel_seconds(row, spec, model) + floor_seconds, held_out, ""});
    }
    const KernelErrorSummary held_out = summarize_errors(group_predictions, true).back();
    refit.held_out_rows = held_out.rows;
    refit.held_out_median_error = held_out.median_error;
    refit.held_out_p90_error = held_out.p90_error;
    calibration.predictions.insert(calibration.predictions.end(), group_predictions.begin(), group_predictions.end());
    calibration.refits.push_back(refit);
  }
  calibration.held_out_before = summarize_errors(before, true);
  calibration.held_out_after = summarize_errors(calibration.predictions, true);
  model.fit.board_gemm = kept;
  model.fit.board_gemm.insert(model.fit.board_gemm.end(), calibration.refits.begin(), calibration.refits.end());
  model.fit.date = date;
  calibration.profile = parse_json_file(catalog.root() / "devices" / (device_id + ".json"));
  calibration.profile["kernel_model"] = write_kernel_model(model);
  std::string refitted;
  for (const BoardGemmRefit& refit : model.fit.board_gemm) {
    refitted += std::string(refitted.empty() ? "" : "; ") + names_of(refit.precisions) + " " +
                format_number(model.gemm_efficiency_for(refit.precisions.front()), "%.3f") + " (borrowed " +
                format_number(refit.borrowed_efficiency, "%.3f") + ") on " + std::to_string(refit.training_rows) +
                " GEMM rows of " + refit.table + ", " + std::to_string(refit.held_out_rows) +
                " held out: median error " + format_number(refit.held_out_median_error * 100, "%.1f") + "%, p90 " +
                format_number(refit.held_out_p90_error * 100, "%.1f") + "%";
  }
  calibration.profile["sources"]["board_gemm_efficiency"] =
      "this board's own GEMM efficiency, fitted by `placesim calibrate --board-gemm-kernels` (" + date +
      "; t = the borrowed model's time at efficiency e + a floor for a call timed alone, Nelder-Mead on the mean "
      "absolute log ratio, one row in five held out): " + refitted;
  return calibration;
}

}  // namespace placesim
