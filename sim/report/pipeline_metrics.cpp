#include "sim/report/pipeline_metrics.h"

#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"

namespace placesim {

PipelineMetrics compute_pipeline_metrics(const RunMetrics& run, const std::vector<DeviceId>& stage_devices,
                                         int64_t micro_batches, const std::string& schedule) {
  PipelineMetrics metrics;
  metrics.stages = stage_devices.size();
  metrics.micro_batches = micro_batches;
  metrics.schedule = schedule;
  const double k = static_cast<double>(metrics.stages);
  metrics.ideal_bubble_fraction = (k - 1) / (static_cast<double>(micro_batches) + k - 1);
  for (DeviceId device : stage_devices) {
    const DeviceMetrics& d = run.devices[device];
    PipelineStageMetrics stage;
    stage.device = device;
    stage.busy_seconds = d.busy_seconds;
    stage.bubble_fraction = run.makespan_seconds > 0 ? 1 - d.busy_seconds / run.makespan_seconds : 0;
    stage.peak_memory_bytes = d.peak_memory_bytes;
    stage.peak_memory = d.peak_memory;
    metrics.bubble_fraction += stage.bubble_fraction / k;
    metrics.per_stage.push_back(stage);
  }
  return metrics;
}

std::string pipeline_text(const PipelineMetrics& metrics, const Cluster& cluster) {
  std::string out = "Pipeline: " + std::to_string(metrics.stages) + " stages x " +
                    std::to_string(metrics.micro_batches) + " micro-batches (" + metrics.schedule + "): bubble " +
                    format_percent(metrics.bubble_fraction) + " (ideal (K-1)/(M+K-1) = " +
                    format_percent(metrics.ideal_bubble_fraction) + ")\n";
  for (size_t s = 0; s < metrics.per_stage.size(); ++s) {
    const PipelineStageMetrics& stage = metrics.per_stage[s];
    out += "  stage " + std::to_string(s) + " " + cluster.device(stage.device).name.local() + ": busy " +
           format_seconds(stage.busy_seconds) + ", bubble " + format_percent(stage.bubble_fraction) + ", peak memory " +
           format_bytes(stage.peak_memory_bytes) + " (" + describe_memory(stage.peak_memory) + ")\n";
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
  }
  return {{"stages", metrics.stages},
          {"micro_batches", metrics.micro_batches},
          {"schedule", metrics.schedule},
          {"ideal_bubble_fraction", metrics.ideal_bubble_fraction},
          {"bubble_fraction", metrics.bubble_fraction},
          {"per_stage", stages}};
}

}  // namespace placesim
