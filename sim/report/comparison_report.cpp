#include "sim/report/comparison_report.h"

#include <algorithm>
#include <cstdio>

#include "sim/core/units_format.h"
#include "sim/report/memory_verdict.h"

namespace placesim {
namespace {

Json staleness_json(const StalenessStats& stats) {
  return {{"mean", stats.mean}, {"p50", stats.p50}, {"p99", stats.p99}, {"max", stats.max}, {"updates", stats.updates}};
}

/// The largest peak memory over the strategy's devices.
double peak_memory(const StrategyResult& result) {
  const DeviceMetrics* fullest = fullest_device(result.run);
  return fullest ? fullest->peak_memory_bytes : 0;
}

}  // namespace

double StrategyResult::samples_per_second() const {
  return data_parallel.replicas > 0 ? data_parallel.samples_per_second : run.samples_per_second;
}

double StrategyResult::step_time_seconds() const {
  return data_parallel.replicas > 0 ? data_parallel.step_time_seconds : run.step_time_seconds;
}

std::optional<double> StrategyResult::scaling_efficiency() const {
  if (!single_replica_samples_per_second || *single_replica_samples_per_second <= 0) return std::nullopt;
  const double copies = scaling_copies > 0
                            ? scaling_copies
                            : static_cast<double>(std::max<int64_t>(replicas, static_cast<int64_t>(data_parallel.replicas)));
  return samples_per_second() / (copies * *single_replica_samples_per_second);
}

std::string comparison_table(const std::vector<StrategyResult>& results, const std::string& sample_unit) {
  size_t name_width = 8;
  for (const auto& result : results) name_width = std::max(name_width, result.name.size());
  std::string out = pad("strategy", name_width, true) + "  " + pad("replicas", 8) + "  " + pad("global batch", 12) + "  " +
                    pad("step time", 11) + "  " + pad(sample_unit + "/s", 12) + "  " + pad("MFU", 6) + "  " +
                    pad("scaling", 8) + "  " + pad("comm", 6) + "  " +
                    pad("peak memory", 11) + "  " + pad("straggler", 10) + "  " + pad("staleness", 16) + "\n";
  for (const auto& result : results) {
    const auto& dp = result.data_parallel;
    auto efficiency = result.scaling_efficiency();
    std::string staleness = dp.asynchronous ? format_number(dp.staleness.mean, "%.2f") + " (p99 " + format_number(dp.staleness.p99, "%.0f") + ")"
                                            : "-";
    std::string straggler = dp.replicas > 0 && !dp.asynchronous ? format_seconds(dp.straggler_loss_seconds) : "-";
    const int64_t replicas = std::max<int64_t>(result.replicas, static_cast<int64_t>(dp.replicas));
    const std::string global_batch = result.efficiency ? std::to_string(result.efficiency->batch.global()) : "-";
    const std::string mfu = result.efficiency ? format_percent(result.efficiency->mfu()) : "-";
    out += pad(result.name, name_width, true) + "  " + pad(std::to_string(replicas), 8) + "  " + pad(global_batch, 12) + "  " +
           pad(format_seconds(result.step_time_seconds()), 11) + "  " + pad(format_number(result.samples_per_second(), "%.1f"), 12) +
           "  " + pad(mfu, 6) + "  " + pad(efficiency ? format_percent(*efficiency) : "-", 8) + "  " +
           pad(format_percent(result.run.communication_share), 6) + "  " + pad(format_bytes(peak_memory(result)), 11) +
           "  " + pad(straggler, 10) + "  " + pad(staleness, 16) + "\n";
  }
  bool fp8 = false;
  for (const StrategyResult& result : results) fp8 |= result.efficiency && result.efficiency->peak_precision == "fp8";
  // fp8 MFU is quoted against the dense FP8 peak: say so, as the field does not agree on it.
  out += std::string("\nglobal batch: samples per optimizer step over all replicas; MFU: model FLOPs per second / the devices'\n") +
         (fp8 ? "dense fp8 peak, not bf16's (docs/llm-planning.md, FP8); scaling:"
              : "peak (docs/llm-planning.md); scaling:") +
         " throughput / (replicas x the same strategy's throughput on one\n"
         "replica; for data x pipeline x tensor, on data 1; for PipeDream's replicated stages, devices / tensor x\n"
         "the whole model on one tensor group); comm: share of the\n"
         "run with gradients or tensors in flight and no device computing; peak memory: the fullest device's;\n"
         "straggler: mean time per step between the average and the slowest replica finishing backward (sync);\n"
         "staleness: updates applied by other workers between a worker's read of the variables and its own\n"
         "update (async).\n";
  // One strategy's report says it beside its Model FLOPs line (efficiency_text), above the table.
  double highest_mfu = 0;
  for (const StrategyResult& result : results) {
    if (result.efficiency) highest_mfu = std::max(highest_mfu, result.efficiency->mfu());
  }
  if (results.size() > 1) out += mfu_above_peak_note(highest_mfu);
  return out;
}

Json data_parallel_json(const DataParallelMetrics& metrics) {
  Json replicas = Json::array();
  for (const auto& replica : metrics.per_replica) {
    Json entry = {{"replica", replica.replica},
                  {"finish_seconds", replica.finish_seconds},
                  {"step_seconds", replica.step_seconds},
                  {"samples_per_second", replica.samples_per_second}};
    if (metrics.asynchronous) entry["staleness"] = staleness_json(replica.staleness);
    replicas.push_back(std::move(entry));
  }
  Json result = {{"replicas", metrics.replicas},
                 {"mode", metrics.asynchronous ? "async" : "sync"},
                 {"samples_per_second", metrics.samples_per_second},
                 {"step_time_seconds", metrics.step_time_seconds},
                 {"per_replica", replicas}};
  if (metrics.asynchronous) {
    result["staleness"] = staleness_json(metrics.staleness);
  } else {
    result["straggler_loss_seconds"] = metrics.straggler_loss_seconds;
    result["straggler_share"] = metrics.straggler_share;
  }
  if (metrics.bottleneck) {
    Json loads = Json::array();
    for (const ResourceLoad& load : metrics.bottleneck->loads) {
      loads.push_back({{"kind", load.kind}, {"resource", load.resource}, {"busy_share", load.busy_share}});
    }
    result["bottleneck"] = std::move(loads);  // busiest first
  }
  if (!metrics.chosen_by.empty()) result["chosen_by"] = metrics.chosen_by;
  return result;
}

Json comparison_json(const std::string& scenario, const std::vector<StrategyResult>& results) {
  Json strategies = Json::array();
  for (const auto& result : results) {
    Json entry = {{"name", result.name},
                  {"description", result.description},
                  {"step_time_seconds", result.step_time_seconds()},
                  {"samples_per_second", result.samples_per_second()},
                  {"communication_share", result.run.communication_share},
                  {"makespan_seconds", result.run.makespan_seconds}};
    if (auto efficiency = result.scaling_efficiency()) entry["scaling_efficiency"] = *efficiency;
    if (result.single_replica_samples_per_second) {
      entry["single_replica_samples_per_second"] = *result.single_replica_samples_per_second;
    }
    if (result.data_parallel.replicas > 0) entry["data_parallel"] = data_parallel_json(result.data_parallel);
    entry["replicas"] = std::max<int64_t>(result.replicas, static_cast<int64_t>(result.data_parallel.replicas));
    if (result.efficiency) entry["efficiency"] = efficiency_json(*result.efficiency);
    // Memory: the fullest device's peak, its breakdown and capacity; out of memory if any device is.
    if (const DeviceMetrics* fullest = fullest_device(result.run)) {
      entry["peak_memory_bytes"] = fullest->peak_memory_bytes;
      entry["peak_memory"] = memory_breakdown_json(fullest->peak_memory);
      entry["memory_capacity_bytes"] = fullest->memory_capacity_bytes;
    }
    entry["out_of_memory"] = std::any_of(result.run.devices.begin(), result.run.devices.end(),
                                         [](const DeviceMetrics& device) { return device.out_of_memory; });
    entry["collective_bandwidth"] = collective_bandwidth_json(result.run.collective_bandwidth);
    strategies.push_back(std::move(entry));
  }
  return {{"schema_version", 1}, {"kind", "placesim-comparison"}, {"scenario", scenario}, {"strategies", strategies}};
}

}  // namespace placesim
