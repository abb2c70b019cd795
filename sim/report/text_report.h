// The report a person reads in the terminal after `placesim run`: step time, throughput,
// per-device busy time, utilisation and memory, transfers, and the critical path.
#pragma once

#include <string>

#include "sim/report/metrics.h"
#include "sim/report/training_efficiency.h"

namespace placesim {

/// `max_path_entries` caps the critical-path listing (the head and the tail are kept); with
/// `efficiency`, its batches, tokens/s and MFU follow the throughput.
std::string text_report(const ExecutionPlan& plan, const Cluster& cluster, const RunMetrics& metrics,
                        size_t max_path_entries = 12, const TrainingEfficiency* efficiency = nullptr);

}  // namespace placesim
