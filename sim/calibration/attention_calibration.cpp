#include "sim/calibration/attention_calibration.h"

#include <cmath>

#include "sim/calibration/kernel_calibration.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/core/input_error.h"
#include "sim/core/quantile.h"
#include "sim/core/units_format.h"
#include "sim/cost/kernel_cost.h"

namespace placesim {

AttentionCalibration calibrate_attention_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                            const std::string& device_id,
                                                            const std::string& implementation,
                                                            const HardwareCatalog& catalog, const std::string& date) {
  const Json option = device_id;
  const DeviceSpec& spec = catalog.device(device_id, JsonReader(option, "--device"));
  if (!spec.kernel_model) {
    throw InputError("--device", "",
                     "\"" + device_id + "\" has no kernel model: fused attention is fitted against its GEMM model "
                     "(fit one with --from-kernels, or borrow one with --kernel-model-from, first)");
  }
  AttentionCalibration calibration;
  std::vector<KernelMeasurement> rows;
  std::string table_names;
  for (const auto& path : tables) {
    KernelTable table = read_attention_table(path, device_id);
    for (const auto& [reason, count] : table.skipped) calibration.skipped[reason] += count;
    for (KernelMeasurement& row : table.rows) {
      if (row.implementation != implementation) {
        ++calibration.skipped[row.implementation + ": not the implementation fitted"];
        continue;
      }
      rows.push_back(std::move(row));
    }
    table_names += std::string(table_names.empty() ? "" : " + ") + fitted_table_name(path, catalog);
  }
  // The GEMM model's time for each row's work, and the ratio to the measured time, per pass;
  // the table's kernels were timed in bursts, so the GEMM model runs at a burst's rate.
  std::vector<double> model_seconds;
  std::vector<double> ratios[2];
  for (const KernelMeasurement& row : rows) {
    const bool forward = row.pass == kForwardPass;
    model_seconds.push_back(attention_gemm_seconds(row.shape.attention, forward, row.precision, spec, KernelLoad::kBurst));
    ratios[forward ? 0 : 1].push_back(model_seconds.back() / row.seconds);
  }
  for (int pass = 0; pass < 2; ++pass) {
    if (ratios[pass].empty()) {
      throw InputError("--attention-kernels", "",
                       "no " + std::string(pass == 0 ? "attention_fwd" : "attention_bwd") + " row of \"" +
                           implementation + "\" on " + device_id + " in " + table_names);
    }
  }
  AttentionKernelFit& fit = calibration.fit;
  fit.forward_efficiency = median(ratios[0]);
  fit.backward_efficiency = median(ratios[1]);
  fit.implementation = implementation;
  fit.table = table_names;
  fit.date = date;
  fit.rows = static_cast<int64_t>(rows.size());
  std::vector<double> errors;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double efficiency = rows[i].pass == kForwardPass ? fit.forward_efficiency : fit.backward_efficiency;
    const double predicted = model_seconds[i] / efficiency;
    errors.push_back(std::fabs(predicted / rows[i].seconds - 1));
    calibration.predictions.push_back({rows[i], predicted});
  }
  fit.median_error = median(errors);
  fit.p90_error = quantile(errors, 0.9);

  KernelModel model = *spec.kernel_model;
  model.attention = fit;
  calibration.profile = parse_json_file(catalog.root() / "devices" / (device_id + ".json"));
  calibration.profile["kernel_model"] = write_kernel_model(model);
  calibration.profile["sources"]["attention_kernels"] =
      "fused attention (" + implementation + ") against this device's GEMM model, fitted by `placesim calibrate "
      "--attention-kernels` (" + date + "; per pass the median over " + std::to_string(fit.rows) +
      " rows of " + table_names + " of the GEMM model's time for the kernel's work / the measured time): forward " +
      format_number(fit.forward_efficiency, "%.3f") + ", backward " + format_number(fit.backward_efficiency, "%.3f") +
      "; |predicted / measured - 1| median " + format_number(fit.median_error * 100, "%.1f") + "%, p90 " +
      format_number(fit.p90_error * 100, "%.1f") + "% over the fitted rows (no row held out: one parameter per pass)";
  return calibration;
}

}  // namespace placesim
