#include "sim/cluster/kernel_model_json.h"

#include <string>
#include <vector>

#include "sim/core/precision_values_json.h"

namespace placesim {
namespace {

double fraction_in(const JsonReader& value, double max_value) {
  double fraction = value.as_positive_number();
  if (fraction > max_value) {
    value.fail("expected a value in (0, " + brief(Json(max_value)) + "], got " + brief(value.value()));
  }
  return fraction;
}

double bounded_non_negative(const JsonReader& value, double max_value) {
  const double number = value.as_non_negative_number();
  if (number > max_value) value.fail("expected at most " + brief(Json(max_value)) + ", got " + brief(value.value()));
  return number;
}

/// `entry[key]` as bounded_non_negative; 0 when absent.
double bounded_non_negative(const JsonReader& entry, const std::string& key, double max_value) {
  const auto value = entry.find(key);
  return value ? bounded_non_negative(*value, max_value) : 0.0;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (ConvAlgorithm algorithm : conv_algorithms()) names.push_back(to_string(algorithm));
  return names;
}

BoardGemmRefit read_board_gemm(const JsonReader& entry) {
  entry.reject_unknown_keys({"device", "table", "precisions", "borrowed_efficiency", "isolated_floor_seconds",
                             "training_rows", "held_out_rows", "held_out_median_error", "held_out_p90_error"});
  BoardGemmRefit refit;
  refit.device = entry.string_at("device");
  refit.table = entry.string_at("table");
  for (const JsonReader& name : entry.at("precisions").elements()) {
    const std::optional<Precision> precision = parse_precision(name.as_string());
    if (!precision) name.fail("expected a precision name, got " + brief(name.value()));
    refit.precisions.push_back(*precision);
  }
  if (refit.precisions.empty()) entry.at("precisions").fail("a refit names the precisions it set");
  refit.borrowed_efficiency = fraction_in(entry.at("borrowed_efficiency"), 1.0);
  refit.isolated_floor_seconds = bounded_non_negative(entry, "isolated_floor_seconds", 1.0);
  refit.training_rows = entry.integer_or("training_rows", 0, 0, 100'000'000);
  refit.held_out_rows = entry.integer_or("held_out_rows", 0, 0, 100'000'000);
  refit.held_out_median_error = bounded_non_negative(entry, "held_out_median_error", 100);
  refit.held_out_p90_error = bounded_non_negative(entry, "held_out_p90_error", 100);
  return refit;
}

Json write_board_gemm(const BoardGemmRefit& refit) {
  Json precisions = Json::array();
  for (Precision precision : refit.precisions) precisions.push_back(to_string(precision));
  return {{"device", refit.device},
          {"table", refit.table},
          {"precisions", precisions},
          {"borrowed_efficiency", refit.borrowed_efficiency},
          {"isolated_floor_seconds", refit.isolated_floor_seconds},
          {"training_rows", refit.training_rows},
          {"held_out_rows", refit.held_out_rows},
          {"held_out_median_error", refit.held_out_median_error},
          {"held_out_p90_error", refit.held_out_p90_error}};
}

KernelModelFit read_fit(const JsonReader& fit) {
  fit.reject_unknown_keys({"table", "method", "date", "scaled_from", "sibling_devices", "training_rows", "held_out_rows",
                           "held_out_median_error", "held_out_p90_error", "board_gemm"});
  KernelModelFit result;
  result.table = fit.string_at("table");
  if (result.table.empty()) fit.at("table").fail("a kernel model names the measured table it was fitted on");
  result.method = fit.string_or("method", "");
  result.date = fit.string_or("date", "");
  result.scaled_from = fit.string_or("scaled_from", "");
  if (auto siblings = fit.find("sibling_devices")) {
    for (const JsonReader& sibling : siblings->elements()) result.sibling_devices.push_back(sibling.as_string());
  }
  result.training_rows = fit.integer_or("training_rows", 0, 0, 100'000'000);
  result.held_out_rows = fit.integer_or("held_out_rows", 0, 0, 100'000'000);
  result.held_out_median_error = bounded_non_negative(fit, "held_out_median_error", 100);
  result.held_out_p90_error = bounded_non_negative(fit, "held_out_p90_error", 100);
  if (auto board_gemm = fit.find("board_gemm")) {
    for (const JsonReader& refit : board_gemm->elements()) result.board_gemm.push_back(read_board_gemm(refit));
  }
  return result;
}

AttentionKernelFit read_attention_fit(const JsonReader& entry) {
  entry.reject_unknown_keys({"forward_efficiency", "backward_efficiency", "implementation", "table", "date", "rows",
                             "median_error", "p90_error"});
  AttentionKernelFit fit;
  // Relative to the GEMM model of the same work: a fused kernel may beat separate GEMMs, up to 2x.
  fit.forward_efficiency = fraction_in(entry.at("forward_efficiency"), 2.0);
  fit.backward_efficiency = fraction_in(entry.at("backward_efficiency"), 2.0);
  fit.implementation = entry.string_at("implementation");
  fit.table = entry.string_at("table");
  if (fit.table.empty()) entry.at("table").fail("an attention fit names the measured table it was fitted on");
  fit.date = entry.string_or("date", "");
  fit.rows = entry.integer_or("rows", 0, 0, 100'000'000);
  fit.median_error = bounded_non_negative(entry, "median_error", 100);
  fit.p90_error = bounded_non_negative(entry, "p90_error", 100);
  return fit;
}

Json write_attention_fit(const AttentionKernelFit& fit) {
  return {{"forward_efficiency", fit.forward_efficiency},
          {"backward_efficiency", fit.backward_efficiency},
          {"implementation", fit.implementation},
          {"table", fit.table},
          {"date", fit.date},
          {"rows", fit.rows},
          {"median_error", fit.median_error},
          {"p90_error", fit.p90_error}};
}

}  // namespace

KernelModel read_kernel_model(const JsonReader& entry) {
  entry.reject_unknown_keys({"sm_count", "gemm_efficiency", "tile_overhead_k", "tile_overhead_k_by_precision", "small_tile_exponent",
                             "kernel_overhead_seconds", "conv_efficiency", "conv_overhead_seconds", "conv_small_tile_exponent", "conv_fill_waves", "memory_efficiency",
                             "memory_latency_seconds", "reduction_memory_efficiency", "isolated_memory_floor_seconds",
                             "isolated_reduction_floor_seconds", "pooling_reads_per_second_per_sm",
                             "isolated_pooling_floor_seconds", "pooling_source", "attention", "input_power", "fit"});
  KernelModel model;
  model.sm_count = entry.at("sm_count").as_integer(1, 100'000);
  JsonReader gemm = entry.at("gemm_efficiency");
  model.gemm_efficiency = read_precision_values(gemm, [](Precision, const JsonReader& value) { return fraction_in(value, 1.0); });
  if (!model.gemm_efficiency.count(Precision::kFp32)) gemm.fail("missing required key \"fp32\"");
  model.tile_overhead_k = bounded_non_negative(entry, "tile_overhead_k", 1e6);
  if (auto by_precision = entry.find("tile_overhead_k_by_precision")) {
    model.tile_overhead_k_by_precision =
        read_precision_values(*by_precision, [](Precision, const JsonReader& value) { return bounded_non_negative(value, 1e6); });
  }
  model.small_tile_exponent = bounded_non_negative(entry, "small_tile_exponent", 10);
  model.kernel_overhead_seconds = bounded_non_negative(entry, "kernel_overhead_seconds", 1.0);
  if (auto conv = entry.find("conv_efficiency")) {
    conv->reject_unknown_keys(algorithm_names());
    for (ConvAlgorithm algorithm : conv_algorithms()) {
      // Winograd and FFT do fewer multiplications than the GEMM they are compared with: up to 4x.
      if (auto value = conv->find(to_string(algorithm))) model.conv_efficiency[algorithm] = fraction_in(*value, 4.0);
    }
  }
  model.conv_overhead_seconds = bounded_non_negative(entry, "conv_overhead_seconds", 1.0);
  model.conv_small_tile_exponent = bounded_non_negative(entry, "conv_small_tile_exponent", 10);
  model.conv_fill_waves = bounded_non_negative(entry, "conv_fill_waves", 100);
  model.memory_efficiency = fraction_in(entry.at("memory_efficiency"), 1.0);
  model.memory_latency_seconds = bounded_non_negative(entry, "memory_latency_seconds", 1.0);
  if (auto reduction = entry.find("reduction_memory_efficiency")) model.reduction_memory_efficiency = fraction_in(*reduction, 1.0);
  model.isolated_memory_floor_seconds = bounded_non_negative(entry, "isolated_memory_floor_seconds", 1.0);
  model.isolated_reduction_floor_seconds = bounded_non_negative(entry, "isolated_reduction_floor_seconds", 1.0);
  model.pooling_reads_per_second_per_sm = bounded_non_negative(entry, "pooling_reads_per_second_per_sm", 1e15);
  model.isolated_pooling_floor_seconds = bounded_non_negative(entry, "isolated_pooling_floor_seconds", 1.0);
  if (auto source = entry.find("pooling_source")) model.pooling_source = source->as_string();
  if (model.pooling_reads_per_second_per_sm > 0 && model.pooling_source.empty()) {
    entry.fail("a pooling rate (\"pooling_reads_per_second_per_sm\") needs its \"pooling_source\": the table it was "
               "fitted on or the device it was borrowed from");
  }
  model.fit = read_fit(entry.at("fit"));
  if (auto attention = entry.find("attention")) model.attention = read_attention_fit(*attention);
  if (auto input_power = entry.find("input_power")) {
    input_power->reject_unknown_keys({"throughput_fraction", "source"});
    InputPowerCorrection correction;
    JsonReader fractions = input_power->at("throughput_fraction");
    correction.throughput_fraction =
        read_precision_values(fractions, [](Precision, const JsonReader& value) { return fraction_in(value, 1.0); });
    if (correction.throughput_fraction.empty()) fractions.fail("a correction names at least one precision");
    correction.source = input_power->string_at("source");
    if (correction.source.empty()) input_power->at("source").fail("a correction names the measurement it comes from");
    model.input_power = correction;
  }
  return model;
}

Json write_kernel_model(const KernelModel& model) {
  const Json gemm = precision_values_json(model.gemm_efficiency);
  Json conv = Json::object();
  for (const auto& [algorithm, value] : model.conv_efficiency) conv[to_string(algorithm)] = value;
  const KernelModelFit& f = model.fit;
  Json fit = {{"table", f.table},
              {"method", f.method},
              {"date", f.date},
              {"training_rows", f.training_rows},
              {"held_out_rows", f.held_out_rows},
              {"held_out_median_error", f.held_out_median_error},
              {"held_out_p90_error", f.held_out_p90_error}};
  if (!f.scaled_from.empty()) fit["scaled_from"] = f.scaled_from;
  if (!f.sibling_devices.empty()) fit["sibling_devices"] = f.sibling_devices;
  if (!f.board_gemm.empty()) {
    Json refits = Json::array();
    for (const BoardGemmRefit& refit : f.board_gemm) refits.push_back(write_board_gemm(refit));
    fit["board_gemm"] = refits;
  }
  Json json{{"sm_count", model.sm_count},
              {"gemm_efficiency", gemm},
              {"tile_overhead_k", model.tile_overhead_k},
              {"small_tile_exponent", model.small_tile_exponent},
              {"kernel_overhead_seconds", model.kernel_overhead_seconds},
              {"conv_efficiency", conv},
              {"conv_overhead_seconds", model.conv_overhead_seconds},
              {"conv_small_tile_exponent", model.conv_small_tile_exponent},
              {"conv_fill_waves", model.conv_fill_waves},
              {"memory_efficiency", model.memory_efficiency},
              {"memory_latency_seconds", model.memory_latency_seconds},
              {"fit", fit}};
  // Written only when fitted (several GEMM precisions; memory-bound rows), so older profiles read unchanged.
  if (!model.tile_overhead_k_by_precision.empty()) {
    json["tile_overhead_k_by_precision"] = precision_values_json(model.tile_overhead_k_by_precision);
  }
  if (model.reduction_memory_efficiency > 0) json["reduction_memory_efficiency"] = model.reduction_memory_efficiency;
  if (model.isolated_memory_floor_seconds > 0) json["isolated_memory_floor_seconds"] = model.isolated_memory_floor_seconds;
  if (model.isolated_reduction_floor_seconds > 0) {
    json["isolated_reduction_floor_seconds"] = model.isolated_reduction_floor_seconds;
  }
  if (model.pooling_reads_per_second_per_sm > 0) {
    json["pooling_reads_per_second_per_sm"] = model.pooling_reads_per_second_per_sm;
    json["isolated_pooling_floor_seconds"] = model.isolated_pooling_floor_seconds;
    json["pooling_source"] = model.pooling_source;
  }
  if (model.attention) json["attention"] = write_attention_fit(*model.attention);
  if (model.input_power) {
    json["input_power"] = {{"throughput_fraction", precision_values_json(model.input_power->throughput_fraction)},
                           {"source", model.input_power->source}};
  }
  return json;
}

}  // namespace placesim
