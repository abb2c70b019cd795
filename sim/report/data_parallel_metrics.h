// Metrics specific to data-parallel runs, from the plan's replica tags and the timeline:
// throughput (for async, each worker's own rate summed), straggler loss for synchronous
// training (time replicas wait for the slowest), and the staleness of asynchronous updates.
#pragma once

#include <optional>
#include <vector>

#include "sim/plan/execution_plan.h"
#include "sim/report/bottleneck.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct StalenessStats {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  size_t updates = 0;  ///< number of gradients measured
};

struct ReplicaMetrics {
  int64_t replica = 0;
  double finish_seconds = 0;      ///< when its last task ended
  double step_seconds = 0;        ///< finish / steps
  double samples_per_second = 0;  ///< its batch x steps / finish
  StalenessStats staleness;       ///< async only
};

struct DataParallelMetrics {
  size_t replicas = 0;
  bool asynchronous = false;
  double samples_per_second = 0;       ///< sync: global batch / step time; async: sum of worker rates
  double step_time_seconds = 0;        ///< sync: makespan / steps; async: mean worker step time
  double straggler_loss_seconds = 0;   ///< sync: mean over steps of (slowest - mean) backward end
  double straggler_share = 0;          ///< straggler loss / step time
  StalenessStats staleness;            ///< async: updates applied by others between pull and apply
  std::vector<ReplicaMetrics> per_replica;
  /// The busiest resource (compute, PS CPU, PS NIC, network), when the caller had the cluster.
  std::optional<Bottleneck> bottleneck;
  /// What chose data parallelism when the scenario left the layout to placesim (Strategy::chosen_by).
  std::string chosen_by;
};

/// Staleness of one gradient: applies of the same variable that ended between the worker's pull
/// and the start of its own apply. Uses the first variable each worker pulls as the version clock.
DataParallelMetrics compute_data_parallel_metrics(const ExecutionPlan& plan, const Timeline& timeline);

/// Summary statistics of a sample (p50/p99 by nearest rank).
StalenessStats summarize(std::vector<double> values);

}  // namespace placesim
