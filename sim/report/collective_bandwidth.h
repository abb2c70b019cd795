// What a run's collectives achieved, in the two numbers nccl-tests prints (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md): algbw = S / t for a collective of S bytes taking t seconds, and
// busbw = algbw x factor (sim/cluster/collective_profile.h, bus_bandwidth_factor), the rate each
// rank's busiest link ran at in a ring, comparable across collectives and rank counts.
// The table groups a timeline's collective tasks by (kind, size, ranks, machines, transport,
// timing); a task's time is its interval in the timeline, from its start to its end.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/collective_profile.h"
#include "sim/core/json_reader.h"
#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct CollectiveBandwidth {
  double algbw_bytes_per_second = 0;
  double busbw_bytes_per_second = 0;
};

/// nccl-tests' algbw and busbw of a `kind` collective of `bytes` (nccl-tests' size: each rank's
/// buffer for all-reduce, broadcast and reduce, the total gathered or scattered for all-gather
/// and reduce-scatter) over `ranks` ranks taking `seconds`. Zeros when seconds <= 0 or ranks < 2.
CollectiveBandwidth collective_bandwidth(CollectiveKind kind, double bytes, int ranks, double seconds);

/// One row of the table: the collectives of the run that share a kind, size, rank count, number
/// of machines, transport and timing.
struct CollectiveBandwidthRow {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;             ///< nccl-tests' size: the tasks' `bytes` (sim/plan/execution_plan.h)
  int ranks = 0;                ///< devices of the group
  int machines = 0;             ///< distinct machines (ClusterDevice::node) among them
  std::string transport;        ///< the plan transport's id, or "links"
  bool measured_curve = false;  ///< timed by the cluster's measured curve
  /// Timed by NCCL's cost model (its latencies and protocol above the links' alpha-beta time,
  /// sim/plan/nccl_cost_model.h), with this protocol ("LL", "LL128", "Simple"); "" otherwise.
  std::string nccl_protocol;
  /// "measured_curve", "nccl_model" or "link_rate" (the point-to-point schedule over the links).
  std::string timing() const;
  size_t calls = 0;
  double total_seconds = 0;  ///< sum of the calls' durations
  double mean_seconds = 0;   ///< total / calls
  CollectiveBandwidth bandwidth;  ///< of the mean call, as nccl-tests averages its iterations
};

/// The table of a run's collective tasks of at least 2 devices and positive bytes, largest total
/// time first (ties: larger size first, then kind, ranks, machines, transport, timing).
std::vector<CollectiveBandwidthRow> collective_bandwidth_table(const ExecutionPlan& plan, const Cluster& cluster,
                                                               const Timeline& timeline);

/// The table as the JSON report's `collective_bandwidth` (docs/report-format.md): one object per
/// row with `collective`, `bytes`, `ranks`, `machines`, `transport`, `timing`, `calls`,
/// `total_seconds`, `mean_seconds`, `algbw_bytes_per_second`, `busbw_bytes_per_second`.
Json collective_bandwidth_json(const std::vector<CollectiveBandwidthRow>& table);

}  // namespace placesim
