// Synthetic plans for benchmarks: `tasks` tasks spread over `devices` GPUs in a ring, each
// device running a chain of compute tasks and every `transfer_every`-th task sending its output
// to the next device, whose chain then waits for it.
#pragma once

#include <cstddef>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"

namespace placesim::bench {

/// `devices` GPUs, each linked to the next (and the last to the first) by a link of
/// `bandwidth_bytes_per_second` and `latency_seconds` per direction.
Cluster ring_cluster(std::size_t devices, double bandwidth_bytes_per_second = 2.5e10, double latency_seconds = 1e-6);
ExecutionPlan synthetic_plan(const Cluster& cluster, std::size_t tasks, std::size_t transfer_every);

}  // namespace placesim::bench
