// Writes a Timeline in the Chrome trace-event format (opens in Perfetto and chrome://tracing):
// one process per device with its compute stream and its collectives, one "network" process with
// a track per link, task names and phases as categories, and flow arrows for dependencies between
// resources. A viewer draws each thread as a stack of nested or disjoint slices, so collectives
// that overlap on a device, and transfers that overlap on a link, are spread over lanes (threads):
// each takes the lowest-numbered lane free at its start, in order of start, then task id.
#pragma once

#include <string>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim {

/// Flow arrows are emitted for at most this many dependencies (large plans stay openable).
constexpr size_t kMaxTraceFlows = 200000;

/// The trace of `timeline` (indexed by the task ids of `plan`) on `cluster`; deterministic.
Json chrome_trace(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline);

}  // namespace placesim
