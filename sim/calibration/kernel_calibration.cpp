#include "sim/calibration/kernel_calibration.h"

#include <algorithm>
#include <filesystem>

#include "sim/cluster/kernel_model_json.h"
#include "sim/core/units_format.h"

namespace placesim {

namespace {

nlohmann::ordered_json in_order_of(const nlohmann::ordered_json& original, const Json& updated) {
  if (!original.is_object() || !updated.is_object()) return nlohmann::ordered_json::parse(updated.dump());
  nlohmann::ordered_json result = nlohmann::ordered_json::object();
  for (const auto& [key, value] : original.items()) {
    if (updated.contains(key)) result[key] = in_order_of(value, updated.at(key));
  }
  for (const auto& [key, value] : updated.items()) {
    if (!result.contains(key)) result[key] = nlohmann::ordered_json::parse(value.dump());
  }
  return result;
}

}  // namespace

std::string profile_text_in_file_order(const std::filesystem::path& original, const Json& updated) {
  nlohmann::ordered_json file = nlohmann::ordered_json::parse(read_input_file(original));
  return in_order_of(file, updated).dump(2) + "\n";
}

const char* const kMemoryRowsOf = "memory-bound rows of ";

std::string fitted_table_name(const std::filesystem::path& path, const HardwareCatalog& catalog) {
  std::error_code error;
  const bool bundled = std::filesystem::equivalent(path.parent_path().empty() ? "." : path.parent_path(),
                                                   catalog.root() / "kernels", error);
  return bundled ? "hardware_profiles/kernels/" + path.filename().string() : path.string();
}

KernelCalibration calibrate_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                               const std::string& device_id, const std::set<Precision>& precisions,
                                               const HardwareCatalog& catalog, const std::string& date,
                                               const std::vector<std::filesystem::path>& memory_tables,
                                               const std::vector<std::string>& sibling_ids) {
  const Json option = device_id;
  const DeviceSpec& spec = catalog.device(device_id, JsonReader(option, "--device"));
  if (spec.sm_count <= 0) {
    throw InputError("--device", "", "the profile of \"" + device_id +
                                         "\" has no sm_count (the datasheet's SM count): add it with its source");
  }
  std::vector<const DeviceSpec*> siblings;
  for (const std::string& sibling_id : sibling_ids) {
    const Json sibling_option = sibling_id;
    const DeviceSpec& sibling = catalog.device(sibling_id, JsonReader(sibling_option, "--sibling-devices"));
    if (sibling.id == spec.id || sibling.sm_count != spec.sm_count ||
        sibling.compute_capability != spec.compute_capability) {
      throw InputError("--sibling-devices", "",
                       "\"" + sibling_id + "\" (" + std::to_string(sibling.sm_count) + " SMs, compute capability \"" +
                           sibling.compute_capability + "\") is not another board of " + device_id + "'s chip (" +
                           std::to_string(spec.sm_count) + " SMs, compute capability \"" + spec.compute_capability +
                           "\")");
    }
    siblings.push_back(&sibling);
  }
  std::vector<KernelMeasurement> rows;
  KernelCalibration calibration;
  std::string table_names;
  std::vector<std::pair<std::filesystem::path, bool>> sources;  // (table, memory-bound rows only)
  for (const auto& path : tables) sources.push_back({path, false});
  for (const auto& path : memory_tables) sources.push_back({path, true});
  for (const auto& [path, memory_only] : sources) {
    KernelTable table = read_kernel_table(path);
    for (const auto& [reason, count] : table.skipped) calibration.skipped[reason] += count;
    for (KernelMeasurement& row : table.rows) {
      const bool own = row.device == device_id;
      const bool sibling = std::any_of(siblings.begin(), siblings.end(),
                                       [&](const DeviceSpec* board) { return board->id == row.device; });
      if (!own && !sibling) continue;
      if (memory_only && !is_memory_bound(row)) {
        ++calibration.skipped[row.op + ": only memory-bound rows are taken from " + path.filename().string()];
        continue;
      }
      if (sibling && is_memory_bound(row)) {
        ++calibration.skipped[row.op + " of " + row.device + ": a sibling board's memory is its own"];
        continue;
      }
      rows.push_back(std::move(row));
    }
    table_names += std::string(table_names.empty() ? "" : " + ") + (memory_only ? kMemoryRowsOf : "") +
                   fitted_table_name(path, catalog);
  }
  if (rows.empty()) {
    throw InputError(tables.empty() ? "--from-kernels" : tables.front().string(), "",
                     "no GEMM or convolution rows for device \"" + device_id + "\"");
  }
  KernelFitOptions options;
  options.date = date;
  options.table = table_names;
  options.precisions = precisions;
  options.siblings = siblings;
  calibration.fit = fit_kernel_model(rows, spec, spec.sm_count, options);
  calibration.profile = parse_json_file(catalog.root() / "devices" / (device_id + ".json"));
  calibration.profile["kernel_model"] = write_kernel_model(calibration.fit.model);
  std::string sibling_rows;
  for (const std::string& sibling_id : sibling_ids) sibling_rows += (sibling_rows.empty() ? "" : ", ") + sibling_id;
  calibration.profile["sources"]["kernel_model"] =
      "fitted by `placesim calibrate --from-kernels` on " + options.table +
      (sibling_rows.empty() ? "" : " (with the GEMM and convolution rows of " + sibling_rows + ", the same chip)") +
      " (" + date + "); see kernel_model.fit";
  return calibration;
}

FittedTables fitted_tables_of(const std::string& fit_table, const HardwareCatalog& catalog) {
  FittedTables tables;
  const std::string bundled = "hardware_profiles/kernels/";
  size_t start = 0;
  while (start <= fit_table.size()) {
    const size_t plus = fit_table.find(" + ", start);
    std::string name = fit_table.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    const bool memory_rows = name.rfind(kMemoryRowsOf, 0) == 0;
    if (memory_rows) name = name.substr(std::string(kMemoryRowsOf).size());
    const std::filesystem::path path =
        name.rfind(bundled, 0) == 0 ? catalog.root() / "kernels" / name.substr(bundled.size()) : std::filesystem::path(name);
    (memory_rows ? tables.memory_rows : tables.whole).push_back(path);
    if (plus == std::string::npos) break;
    start = plus + 3;
  }
  return tables;
}

KernelModelCheck check_kernel_model(const KernelModel& model, const DeviceSpec& spec,
                                    const std::vector<std::filesystem::path>& tables,
                                    const std::set<Precision>& precisions, const HardwareCatalog& catalog,
                                    const std::vector<std::filesystem::path>& fitted_tables,
                                    const std::vector<std::filesystem::path>& fitted_memory_tables) {
  auto among = [](const std::filesystem::path& path, const std::vector<std::filesystem::path>& list) {
    std::error_code error;
    for (const auto& other : list) {
      if (std::filesystem::equivalent(path, other, error)) return true;
    }
    return false;
  };
  KernelModelCheck check;
  for (const auto& path : tables) {
    KernelTable table = read_kernel_table(path, spec.id);
    for (const auto& [reason, count] : table.skipped) check.skipped[reason] += count;
    const bool fitted = among(path, fitted_tables), memory_fitted = among(path, fitted_memory_tables);
    for (KernelMeasurement& row : table.rows) {
      if (fitted || (memory_fitted && is_memory_bound(row))) {
        ++check.skipped[row.op + ": the fit saw these rows of " + path.filename().string()];
        continue;
      }
      if (!precisions.empty() && !precisions.count(row.precision)) {
        ++check.skipped[std::string(to_string(row.precision)) + " rows: not a precision the model was fitted on"];
        continue;
      }
      const double predicted = predict_kernel_seconds(row, spec, model);
      check.predictions.push_back({std::move(row), predicted, true, ""});
    }
    check.tables += std::string(check.tables.empty() ? "" : " + ") + fitted_table_name(path, catalog);
  }
  if (check.predictions.empty()) {
    throw InputError(tables.empty() ? "--check-kernels" : tables.front().string(), "",
                     "no row for device \"" + spec.id + "\" to check the kernel model on");
  }
  check.errors = summarize_errors(check.predictions, true);
  return check;
}

MemoryCalibration calibrate_memory_from_kernel_tables(const std::vector<std::filesystem::path>& tables,
                                                      const std::string& device_id, const std::string& source_id,
                                                      const HardwareCatalog& catalog, const std::string& date) {
  const Json target_option = device_id, source_option = source_id;
  const DeviceSpec& target = catalog.device(device_id, JsonReader(target_option, "--device"));
  const DeviceSpec& source = catalog.device(source_id, JsonReader(source_option, "--memory-kernels-device"));
  if (target.kernel_model && target.kernel_model->fit.scaled_from.empty()) {
    throw InputError("--device", "", "\"" + device_id + "\" has a kernel model: fit its memory-bound kernels with "
                                     "--from-kernels TABLE --memory-kernels TABLE");
  }
  std::vector<KernelMeasurement> rows;
  std::string table_names;
  for (const auto& path : tables) {
    for (KernelMeasurement& row : read_kernel_table(path, source_id).rows) {
      // Pooling rows are bound by their window reads (pooling_model.h), which a roofline
      // profile's bandwidth fractions do not price: left to a kernel model's fit.
      if (is_memory_bound(row) && !is_pooling_row(row)) rows.push_back(std::move(row));
    }
    table_names += std::string(table_names.empty() ? "" : " + ") + fitted_table_name(path, catalog);
  }
  MemoryCalibration calibration;
  std::vector<const KernelMeasurement*> elementwise, reduction;
  for (const KernelMeasurement& row : rows) {
    if (is_held_out(row, 5)) continue;
    (is_reduction_row(row) ? reduction : elementwise).push_back(&row);
    ++calibration.training_rows;
  }
  if (elementwise.empty() || reduction.empty()) {
    throw InputError(table_names, "", "no elementwise or no softmax/layernorm rows of \"" + source_id + "\" to fit on");
  }
  const double bandwidth = source.memory_bandwidth_bytes_per_second;
  calibration.elementwise = fit_memory_rows(elementwise, bandwidth);
  calibration.reduction = fit_memory_rows(reduction, bandwidth);
  std::vector<KernelPrediction> predictions;
  for (const KernelMeasurement& row : rows) {
    const MemoryFit& fit = is_reduction_row(row) ? calibration.reduction : calibration.elementwise;
    predictions.push_back({row, isolated_memory_seconds(row.memory_bytes, bandwidth, fit), is_held_out(row, 5), ""});
  }
  calibration.held_out = summarize_errors(predictions, true);
  calibration.profile = parse_json_file(catalog.root() / "devices" / (device_id + ".json"));
  calibration.profile["memory_efficiency"] = calibration.elementwise.efficiency;
  calibration.profile["reduction_memory_efficiency"] = calibration.reduction.efficiency;
  if (calibration.profile.contains("kernel_model")) {  // a borrowed model prices memory-bound kernels with these
    calibration.profile["kernel_model"]["memory_efficiency"] = calibration.elementwise.efficiency;
    calibration.profile["kernel_model"]["reduction_memory_efficiency"] = calibration.reduction.efficiency;
  }
  const KernelErrorSummary& all = calibration.held_out.back();
  const std::string fit =
      "fitted by `placesim calibrate --memory-kernels` on the memory-bound rows of " + source_id + " in " + table_names +
      " (" + date + "), as fractions of " + source_id + "'s " + format_number(bandwidth / 1e9, "%.0f") +
      " GB/s: t = bytes / (bandwidth x e) + floor by Nelder-Mead on the mean absolute log ratio, one row in five held out (" +
      std::to_string(all.rows) + " rows: median error " + format_number(all.median_error * 100, "%.1f") + "%, p90 " +
      format_number(all.p90_error * 100, "%.1f") + "%); ";
  calibration.profile["sources"]["memory_efficiency"] =
      fit + "elementwise kernels, floor " + format_number(calibration.elementwise.floor_seconds * 1e6, "%.1f") +
      " us (an op timed alone, dispatch included; not charged in a step)";
  calibration.profile["sources"]["reduction_memory_efficiency"] =
      fit + "softmax and layernorm kernels, floor " + format_number(calibration.reduction.floor_seconds * 1e6, "%.1f") +
      " us; used for batch/layer norms, softmax and the loss";
  return calibration;
}

Json transfer_kernel_model(const std::string& source_id, const std::string& target_id, const HardwareCatalog& catalog,
                           const std::string& date) {
  const Json source_option = source_id, target_option = target_id;
  const DeviceSpec& source = catalog.device(source_id, JsonReader(source_option, "--kernel-model-from"));
  const DeviceSpec& target = catalog.device(target_id, JsonReader(target_option, "--device"));
  if (!source.kernel_model) {
    throw InputError("--kernel-model-from", "", "the profile of \"" + source_id + "\" has no kernel_model to borrow");
  }
  if (target.sm_count <= 0) {
    throw InputError("--device", "", "the profile of \"" + target_id + "\" has no sm_count (the datasheet's SM count)");
  }
  KernelModel model = *source.kernel_model;
  model.sm_count = target.sm_count;
  model.fit.scaled_from = source_id;
  model.fit.date = date;
  Json profile = parse_json_file(catalog.root() / "devices" / (target_id + ".json"));
  const bool own_bandwidth_fractions = target.reduction_memory_efficiency > 0;  // written only by a memory fit
  if (own_bandwidth_fractions) {
    model.memory_efficiency = target.memory_efficiency;
    model.reduction_memory_efficiency = target.reduction_memory_efficiency;
  }
  // GEMM efficiencies refitted on the target's own rows (--board-gemm-kernels) stay; refits of
  // another board come along with the model they belong to.
  std::vector<BoardGemmRefit> own_refits;
  if (target.kernel_model) {
    for (const BoardGemmRefit& refit : target.kernel_model->fit.board_gemm) {
      if (refit.device == target_id) own_refits.push_back(refit);
    }
  }
  if (!own_refits.empty()) {
    std::vector<BoardGemmRefit> refits = own_refits;
    for (const BoardGemmRefit& refit : model.fit.board_gemm) {
      const bool covered = std::any_of(own_refits.begin(), own_refits.end(), [&](const BoardGemmRefit& own) {
        return std::any_of(refit.precisions.begin(), refit.precisions.end(), [&](Precision precision) {
          return std::find(own.precisions.begin(), own.precisions.end(), precision) != own.precisions.end();
        });
      });
      if (!covered) refits.push_back(refit);
    }
    for (const BoardGemmRefit& own : own_refits) {
      for (Precision precision : own.precisions) {
        model.gemm_efficiency[precision] = target.kernel_model->gemm_efficiency_for(precision);
      }
    }
    model.fit.board_gemm = refits;
  }
  std::string board_refits;
  for (const BoardGemmRefit& refit : model.fit.board_gemm) {
    std::string precisions;
    for (Precision precision : refit.precisions) precisions += (precisions.empty() ? "" : "/") + to_string(precision);
    board_refits += "; its " + precisions + " GEMM efficiency refitted on " +
                    (refit.device == target_id ? std::string("this board's") : refit.device + "'s") +
                    " own GEMM rows (" + refit.table + ", kernel_model.fit.board_gemm)";
  }
  profile["kernel_model"] = write_kernel_model(model);
  profile["sources"]["kernel_model"] =
      "the kernel model of " + source_id + " (fitted on " + source.kernel_model->fit.table +
      "), with this device's SM count, peak and bandwidth" +
      (own_bandwidth_fractions ? std::string(" and its own measured bandwidth fractions (memory_efficiency, "
                                             "reduction_memory_efficiency)")
                               : std::string()) +
      (board_refits.empty() ? std::string(": no measured table of its own") : board_refits) + " (" + date + ")";
  return profile;
}

}  // namespace placesim
