#include "sim/report/pipeline_metrics.h"

#include <set>

#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"
#include "sim/spec/strategy.h"

namespace placesim {

PipelineMetrics compute_pipeline_metrics(const RunMetrics& run, const std::vector<DeviceId>& stage_devices,
                                         int64_t micro_batches, const std::string& schedule,
                                         int64_t virtual_stages, const std::vector<int64_t>& stage_replicas) {
  PipelineMetrics metrics;
  metrics.stages = stage_devices.size();
  metrics.micro_batches = micro_batches;
  metrics.schedule = schedule;
  metrics.virtual_stages = virtual_stages;
  const double k = static_cast<double>(metrics.stages);
  // The fill and drain, (K-1)/V slots of one micro-batch, against M of them.
  const double fill = (k - 1) / static_cast<double>(virtual_stages);
  metrics.ideal_bubble_fraction = fill / (static_cast<double>(micro_batches) + fill);
  for (DeviceId device : stage_devices) {
    const DeviceMetrics& d = run.devices[device];
    PipelineStageMetrics stage;
    stage.device = device;
    stage.busy_seconds = d.busy_seconds;
    stage.bubble_fraction = run.makespan_seconds > 0 ? 1 - d.busy_seconds / run.makespan_seconds : 0;
    stage.peak_memory_bytes = d.peak_memory_bytes;
    stage.peak_memory = d.peak_memory;
    if (schedule == "pipedream" || schedule == "pipedream-2bw") {
      const auto index = static_cast<int64_t>(metrics.per_stage.size());
      const int64_t versions = pipedream_weight_versions(static_cast<int64_t>(metrics.stages), index, micro_batches,
                                                         schedule == "pipedream-2bw", stage_replicas);
      stage.weight_versions = versions;
      stage.staleness = versions - 1;
      if (!stage_replicas.empty()) stage.replicas = stage_replicas[static_cast<size_t>(index)];
    }
    metrics.bubble_fraction += stage.bubble_fraction / k;
    metrics.per_stage.push_back(stage);
  }
  return metrics;
}

StageTraffic count_stage_traffic(const ExecutionPlan& plan, const std::vector<DeviceId>& stage_devices) {
  std::set<DeviceId> stages(stage_devices.begin(), stage_devices.end());
  StageTraffic traffic;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kTransfer || task.step != 0 || task.source == task.device) continue;
    if (!stages.count(task.source) || !stages.count(task.device)) continue;
    ++traffic.transfers;
    traffic.bytes += task.bytes;
  }
  return traffic;
}

std::string pipeline_text(const PipelineMetrics& metrics, const Cluster& cluster) {
  const bool interleaved = metrics.virtual_stages > 1;
  std::string out = "Pipeline: " + std::to_string(metrics.stages) + " stages x " +
                    std::to_string(metrics.micro_batches) + " micro-batches (" +
                    (interleaved ? "interleaved " + metrics.schedule + ", " + std::to_string(metrics.virtual_stages) +
                                       " virtual stages"
                                 : metrics.schedule) +
                    "): bubble " + format_percent(metrics.bubble_fraction) +
                    (interleaved ? " (ideal ((K-1)/V)/(M+(K-1)/V) = " : " (ideal (K-1)/(M+K-1) = ") +
                    format_percent(metrics.ideal_bubble_fraction) + ")\n";
  if (metrics.traffic) {
    out += "  between stages per step (replica 0, tensor rank 0): " + std::to_string(metrics.traffic->transfers) +
           " transfers, " + format_bytes(metrics.traffic->bytes) + "\n";
  }
  for (size_t s = 0; s < metrics.per_stage.size(); ++s) {
    const PipelineStageMetrics& stage = metrics.per_stage[s];
    out += "  stage " + std::to_string(s) + " " + cluster.device(stage.device).name.local() +
           (!stage.replicas        ? std::string()
            : *stage.replicas == 1 ? std::string(" (its one replica)")
                                   : " (first of " + std::to_string(*stage.replicas) + " replicas)") +
           ": busy " +
           format_seconds(stage.busy_seconds) + ", bubble " + format_percent(stage.bubble_fraction) +
           (stage.staleness ? ", staleness " + std::to_string(*stage.staleness) + " (" +
                                  std::to_string(*stage.weight_versions) + (*stage.weight_versions == 1 ? " weight version)" : " weight versions)")
                            : std::string()) +
           ", peak memory " + format_bytes(stage.peak_memory_bytes) + " (" + describe_memory(stage.peak_memory) + ")\n";
  }
  return out;
}

Json pipeline_json(const PipelineMetrics& metrics, const Cluster& cluster) {
  Json stages = Json::array();
  for (const auto& stage : metrics.per_stage) {
    stages.push_back({{"device", cluster.device(stage.device).name.canonical()},
                      {"busy_seconds", stage.busy_seconds},
                      {"bubble_fraction", stage.bubble_fraction},
                      {"peak_memory_bytes", stage.peak_memory_bytes},
                      {"peak_memory", memory_breakdown_json(stage.peak_memory)}});
    if (stage.staleness) {
      stages.back()["staleness"] = *stage.staleness;
      stages.back()["weight_versions"] = *stage.weight_versions;
    }
    if (stage.replicas) stages.back()["replicas"] = *stage.replicas;
    if (!stage.ops.empty()) {
      stages.back()["first_op"] = stage.ops.front();
      stages.back()["last_op"] = stage.ops.back();
      stages.back()["op_count"] = stage.ops.size();
    }
  }
  Json json = {{"stages", metrics.stages},
               {"micro_batches", metrics.micro_batches},
               {"schedule", metrics.schedule},
               {"virtual_stages", metrics.virtual_stages},
               {"ideal_bubble_fraction", metrics.ideal_bubble_fraction},
               {"bubble_fraction", metrics.bubble_fraction},
               {"per_stage", stages}};
  if (!metrics.chosen_by.empty()) json["chosen_by"] = metrics.chosen_by;
  if (metrics.traffic) {
    json["stage_transfers_per_step"] = metrics.traffic->transfers;
    json["stage_transfer_bytes_per_step"] = metrics.traffic->bytes;
  }
  return json;
}

}  // namespace placesim
