// Schedules the updates of a training run from simulated timings: as many as the convergence
// replay needs, repeating the simulated steps' durations periodically beyond the simulated
// ones, under the strategy as simulated or under a staleness remedy that changes the timing
// (bounded staleness for async, backup workers for sync).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/convergence/simulated_timings.h"
#include "sim/convergence/update_trace.h"

namespace placesim {

/// Asynchronous updates until `max_gradients` have been applied. Each worker reads the newest
/// parameters when its iteration starts (every update applied by then, ties included) and its
/// gradient is applied `busy_seconds` later. With `staleness_bound` s (stale-synchronous
/// parallel, Ho et al. 2013) a worker may not start iteration k before every worker finished
/// iteration k - s - 1: s = 0 is bulk-synchronous, no bound is the simulated async run.
UpdateTrace schedule_async(const SimulatedTimings& timings, std::optional<int64_t> staleness_bound,
                           int64_t max_gradients);

/// Synchronous steps until `max_gradients` gradients have been computed (replicas per step).
/// With `backup_workers` k each step aggregates only the first replicas - k gradients to be
/// ready (ties to the lower worker) and ends the exchange time after the last of those; the
/// others are dropped (TensorFlow's SyncReplicasOptimizer with replicas_to_aggregate = N - k).
UpdateTrace schedule_sync(const SimulatedTimings& timings, int64_t backup_workers, int64_t max_gradients);

/// A pipeline's updates until `max_gradients` gradients have been applied. PipeDream: one update
/// per micro-batch, carrying each replica's gradient of it (worker d, iteration u), its layers read
/// `layer_staleness` updates old (UpdateTrace::layer_staleness); past the simulated updates the
/// spacing of the last simulated step's continues. Flushed: one update per step carrying every
/// replica's micro-batches' gradients (worker d M + j, iteration k), the simulated steps repeated.
UpdateTrace schedule_pipeline(const SimulatedTimings& timings, const std::vector<int64_t>& layer_staleness,
                              int64_t max_gradients);

/// PipeDream's replicated stages (PipelineTimings::stage_replicas, widths w_s, W the widest: the
/// streams) until `max_gradients` gradients have been applied by every stage. Gradient g is
/// stream g mod W's micro-batch g / W (worker, iteration). Stage s's update k carries gradients
/// k w_s to (k + 1) w_s - 1 (a round: one micro-batch of each of its replicas' streams) and
/// changes the layers `layer_stage` puts on s; gradient g reads stage s' at version
/// floor(g / w_s') - stage_staleness[s'], at least 0 (weight stashing: the version its forward
/// there read). Updates in gradient order: after gradient g, those of the stages whose rounds it
/// completes, the last stage first. Each at its simulated end; past the simulated ones the
/// spacing of the stage's last simulated step continues.
UpdateTrace schedule_replicated_stages(const SimulatedTimings& timings, const std::vector<int64_t>& layer_stage,
                                       const std::vector<int64_t>& stage_staleness, int64_t max_gradients);

/// The staleness-free reference: every gradient applied to the parameters it was computed on,
/// one at a time, workers in turn (worker u mod N, its iteration u / N). No clock.
UpdateTrace sequential_trace(int64_t workers, int64_t max_gradients);

}  // namespace placesim
