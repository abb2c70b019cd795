// Pipeline metrics: the bubble (the share of the run a stage's device sits idle) measured from
// the timeline against the ideal (K-1)/(M+K-1) (interleaved 1F1B with V virtual stages:
// ((K-1)/V)/(M+(K-1)/V)), per-stage busy time and peak memory, and the transfers between stages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/metrics.h"

namespace placesim {

struct PipelineStageMetrics {
  DeviceId device = 0;
  double busy_seconds = 0;
  double bubble_fraction = 0;  ///< 1 - busy / makespan
  double peak_memory_bytes = 0;
  MemoryBreakdown peak_memory;
  /// PipeDream's schedule: the updates of this stage between a micro-batch's forward and its own
  /// update, min(K - s, N) - 1, and the weight versions it stashes, min(K - s, N).
  std::optional<int64_t> staleness;
  std::optional<int64_t> weight_versions;
  /// PipeDream's replicated stages: the stage's replicas (its stage_replicas width); the device
  /// above is its first.
  std::optional<int64_t> replicas;
  /// Stages chosen automatically ("stage_replicas": "auto"): the stage's ops in order; empty
  /// otherwise.
  std::vector<std::string> ops;
};

/// The activations and gradients one pipeline (replica 0, tensor rank 0) sends between its
/// stages' devices in one step.
struct StageTraffic {
  int64_t transfers = 0;
  double bytes = 0;
};

struct PipelineMetrics {
  size_t stages = 0;
  int64_t micro_batches = 0;
  std::string schedule;
  int64_t virtual_stages = 1;  ///< model chunks per stage (interleaved 1F1B); 1 otherwise
  /// (K-1)/(M+K-1): GPipe and 1F1B with equal stages, free transfers; interleaved with V virtual
  /// stages, ((K-1)/V)/(M+(K-1)/V) (Narayanan et al. SC'21, section 2.2.2).
  double ideal_bubble_fraction = 0;
  double bubble_fraction = 0;        ///< the stages' bubble fractions, averaged
  std::vector<PipelineStageMetrics> per_stage;
  std::optional<StageTraffic> traffic;  ///< counted for 3D strategies (`parallelism`)
  /// Stages chosen automatically: what was chosen and how (the run's note); "" otherwise.
  std::string chosen_by;
};

/// From a run's device metrics and the stage devices (in stage order). Schedule "pipedream" or
/// "pipedream-2bw": `micro_batches` is the run's (every step's, per stream), and each stage gets
/// its staleness (with PipeDream's `stage_replicas`, pipedream_replicated_weight_versions').
PipelineMetrics compute_pipeline_metrics(const RunMetrics& run, const std::vector<DeviceId>& stage_devices,
                                         int64_t micro_batches, const std::string& schedule,
                                         int64_t virtual_stages = 1, const std::vector<int64_t>& stage_replicas = {});

/// The transfer tasks of the plan's first step from one of `stage_devices` to another.
StageTraffic count_stage_traffic(const ExecutionPlan& plan, const std::vector<DeviceId>& stage_devices);

/// "Pipeline: 4 stages x 8 micro-batches (1f1b): bubble 30.1% (ideal 27.3%)" and a line per stage.
std::string pipeline_text(const PipelineMetrics& metrics, const Cluster& cluster);
Json pipeline_json(const PipelineMetrics& metrics, const Cluster& cluster);

}  // namespace placesim
