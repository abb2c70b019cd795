// The report a person reads in the terminal after `placesim run`: step time, throughput,
// per-device busy time, utilisation and memory, transfers, and the critical path.
#pragma once

#include <string>

#include "sim/report/metrics.h"
#include "sim/report/training_efficiency.h"

namespace placesim {

/// Whether the timeline behind a report was predicted (an engine) or measured (the real backend):
/// the report's first line says which ("Predicted step time" or "Measured step time").
enum class TimelineOrigin { kPredicted, kMeasured };

/// `max_path_entries` caps the critical-path listing (the head and the tail are kept); with
/// `efficiency`, its batches, tokens/s and MFU follow the throughput.
/// "GEMMs at the slowest GPU's pace: x1.057, the expected slowest of 2048 GPUs in lockstep ..."
/// (ExecutionPlan::lockstep_gemm_factor); "" when the factor is 1.
std::string lockstep_text(double lockstep_gemm_factor, int64_t lockstep_gpus);

std::string text_report(const ExecutionPlan& plan, const Cluster& cluster, const RunMetrics& metrics,
                        size_t max_path_entries = 12, TimelineOrigin origin = TimelineOrigin::kPredicted,
                        const TrainingEfficiency* efficiency = nullptr);

/// "Collectives (nccl-tests: ...)": the collectives by kind and size with algbw and busbw,
/// largest total time first, the first ten and a count of the rest; "" when there are none.
std::string collective_bandwidth_text(const std::vector<CollectiveBandwidthRow>& table);

}  // namespace placesim
