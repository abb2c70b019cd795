// Several strategies of one scenario side by side: step time, throughput, scaling efficiency
// against one replica, communication share, straggler loss and staleness.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/json_reader.h"
#include "sim/report/data_parallel_metrics.h"
#include "sim/report/metrics.h"
#include "sim/report/training_efficiency.h"

namespace placesim {

struct StrategyResult {
  std::string name;
  std::string description;  ///< "sync allreduce (ring), 8 x V100"
  RunMetrics run;
  DataParallelMetrics data_parallel;          ///< replicas == 0 when not data parallel
  /// Model copies the step runs: the data-parallel replicas, a 3D strategy's `data`, else 1.
  int64_t replicas = 1;
  std::optional<TrainingEfficiency> efficiency;  ///< batches, MFU, tokens/s
  std::optional<double> single_replica_samples_per_second;  ///< the same strategy on one replica
  /// Copies of that one replica the strategy's devices hold, when not `replicas`: PipeDream's
  /// replicated stages, whose baseline is the whole model on one tensor group (devices / tensor
  /// copies); 0 = `replicas`.
  double scaling_copies = 0;
  double samples_per_second() const;
  double step_time_seconds() const;
  /// throughput / (copies x single-replica throughput), when the baseline is known; copies:
  /// scaling_copies, else the replicas
  std::optional<double> scaling_efficiency() const;
};

std::string comparison_table(const std::vector<StrategyResult>& results, const std::string& sample_unit);
Json comparison_json(const std::string& scenario, const std::vector<StrategyResult>& results);
/// The data-parallel section of a report (throughput, straggler loss, staleness per worker).
Json data_parallel_json(const DataParallelMetrics& metrics);

}  // namespace placesim
