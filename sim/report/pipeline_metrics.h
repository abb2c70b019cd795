// Pipeline metrics: the bubble (the share of the run a stage's device sits idle) measured from
// the timeline against the ideal (K-1)/(M+K-1), and per-stage busy time and peak memory.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/report/metrics.h"

namespace placesim {

struct PipelineStageMetrics {
  DeviceId device = 0;
  double busy_seconds = 0;
  double bubble_fraction = 0;  ///< 1 - busy / makespan
  double peak_memory_bytes = 0;
  MemoryBreakdown peak_memory;
};

struct PipelineMetrics {
  size_t stages = 0;
  int64_t micro_batches = 0;
  std::string schedule;
  double ideal_bubble_fraction = 0;  ///< (K-1)/(M+K-1): GPipe and 1F1B with equal stages, free transfers
  double bubble_fraction = 0;        ///< the stages' bubble fractions, averaged
  std::vector<PipelineStageMetrics> per_stage;
};

/// From a run's device metrics and the stage devices (in stage order).
PipelineMetrics compute_pipeline_metrics(const RunMetrics& run, const std::vector<DeviceId>& stage_devices,
                                         int64_t micro_batches, const std::string& schedule);

/// "Pipeline: 4 stages x 8 micro-batches (1f1b): bubble 30.1% (ideal 27.3%)" and a line per stage.
std::string pipeline_text(const PipelineMetrics& metrics, const Cluster& cluster);
Json pipeline_json(const PipelineMetrics& metrics, const Cluster& cluster);

}  // namespace placesim
