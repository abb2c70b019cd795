// Parallel3dEmission: what the emitters of one 3D plan share while they write tasks: the inputs,
// the layout's sizes, the model's partition, the collective algorithm picked per (kind, group,
// size), and the tasks that carry from one slot or step to the next (last updates, slot ends,
// the last data-parallel collective per stage and rank).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/planner/parallel_3d_layout.h"
#include "sim/planner/parallel_3d_partition.h"
#include "sim/planner/parallel_3d_symmetry.h"
#include "sim/planner/step_emitter.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct Parallel3dEmission {
  Parallel3dEmission(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                     const ParallelismOptions& options, StepEmitter& emitter, const Parallel3dLayout& layout,
                     const Parallel3dPartition& partition, bool cells);

  const OpGraph& graph;
  const Cluster& cluster;
  const RunOptions& run;
  const ParallelismOptions& options;
  StepEmitter& emitter;
  const Parallel3dLayout& layout;
  const Parallel3dPartition& partition;

  const int64_t replicas;
  const int64_t stages;
  const int64_t ranks;
  const int64_t chunks;        ///< virtual stages per device (1: no interleaving)
  const int64_t model_chunks;  ///< stages x chunks
  /// PipeDream's schedule (ParallelismOptions::asynchronous): the run's steps are one schedule.
  const bool asynchronous;
  /// Micro-batches emitted per step; a cell plan emits only the first; PipeDream's schedule
  /// emits every step's as one step's (micro_batches x run.steps).
  const int64_t micro_batches;
  /// Costs are always 1/M of the batch (M = options.micro_batches).
  const double scale;
  /// One data replica and one tensor rank per stage are simulated for all (symmetry or cells).
  const bool symmetric;
  /// A symmetric plan for SimGrid, which simulates one hop of each ring per phase: its
  /// collectives must be rings (all-to-alls excepted: the representative's flows to each peer).
  /// A cell plan (parallel_3d_builder.h) is symmetric too but only the analytical engine times
  /// it, so its collectives take any algorithm.
  const bool rings_only;
  const int64_t simulated_replicas;
  const int64_t simulated_ranks;
  const SymmetricMode mode;
  /// ZeRO: the replicas a shard is divided over; stage 3 gathers parameters before use.
  const int64_t shards;
  const bool gathers_parameters;

  /// What carries over, for the simulated replicas and ranks only (d < simulated_replicas,
  /// r < simulated_ranks): a symmetric plan of 16 replicas x 8 ranks would otherwise allocate
  /// 128 entries per op that it never reads.
  /// previous_update[d][v][r]: the last update of replica d's rank r of op v.
  std::vector<std::vector<std::vector<std::optional<TaskId>>>> previous_update;
  /// previous_slot_ends[d][s][r]: the marker closing the stage's last slot on that device.
  std::vector<std::vector<std::vector<std::vector<TaskId>>>> previous_slot_ends;
  /// data_collectives[s][r]: the data-parallel collectives of (stage, rank) so far, in the order
  /// they were emitted (a stage's expert reductions by their last).
  std::vector<std::vector<std::vector<TaskId>>> data_collectives;
  /// The last of data_collectives[s][r]; none before the first.
  std::optional<TaskId> last_data_collective(int64_t s, int64_t r) const;
  /// What the next dense data-parallel collective of (stage, rank) waits for
  /// (collective_to_wait_for with options.communication.concurrent_collectives).
  std::optional<TaskId> data_collective_to_wait_for(int64_t s, int64_t r) const;
  /// Context parallelism: the key/value gather (forward) or gradient reduce-scatter (backward)
  /// of each (step, context group, micro-batch, attention op, tensor rank, forward), emitted by
  /// the group's first simulated replica; the others add their dependencies to it.
  std::map<std::tuple<int64_t, int64_t, int64_t, OpId, int64_t, bool>, TaskId> context_collectives;
  /// Expert parallelism: the all-to-all of each (step, expert group, micro-batch, MoE layer,
  /// tensor rank, exchange), emitted by the first of the group's replicas to need it; every
  /// replica adds its dependencies to it.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, ExpertExchange>, TaskId> expert_collectives;

  DeviceId device(int64_t d, int64_t s, int64_t r) const { return layout.device(d, s, r); }
  /// The index under which replica d's state at stage s carries over (previous_update,
  /// previous_slot_ends): d itself, or with PipeDream's replicated stages the stage replica that
  /// runs d there (ParallelismOptions::stage_replica), whose slots and weights d's stream shares.
  int64_t holder(int64_t d, int64_t s) const { return options.stage_replica(d, s); }
  /// "/tp3" for tensor rank 3 when the group has several ranks, "" otherwise.
  std::string rank_name(int64_t r) const { return ranks > 1 ? "/tp" + std::to_string(r) : std::string(); }

  /// Appends a collective task over `group`. Its algorithm is picked once per kind, group and
  /// size: the strategy's `algorithm` names the all-reduces'; all-gathers and reduce-scatters take
  /// it where it applies to them (ring, hierarchical) and otherwise the faster of the two.
  TaskId collective(const std::string& task_name, std::vector<DeviceId> group, double bytes, std::vector<TaskId> deps,
                    int64_t step, const std::string& op, CollectiveKind kind = CollectiveKind::kAllReduce);
  /// A transfer between stages (StepEmitter::transfer): across machines it goes over the
  /// framework's transport as the collectives between those devices do (NCCL's send and receive:
  /// over sockets, its share of the links' rate), inside one machine over the links.
  TaskId stage_transfer(const std::string& tensor, DeviceId from, DeviceId to, double bytes, std::vector<TaskId> deps,
                        int64_t step, int64_t replica);
  /// A collective reducing gradients after `deps`: it reads the gradients in static memory, not
  /// its deps' outputs (the activation gradients of the backward tasks it waits for), so it
  /// keeps none of them alive (Task::reads_dep_outputs).
  TaskId gradient_collective(const std::string& task_name, std::vector<DeviceId> group, double bytes,
                             std::vector<TaskId> deps, int64_t step, const std::string& op,
                             CollectiveKind kind = CollectiveKind::kAllReduce);

 private:
  /// Whether every device of `group` is on one machine.
  bool on_one_machine(const std::vector<DeviceId>& group) const;
  CollectiveAlgorithm algorithm_for(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes);
  std::map<std::tuple<CollectiveKind, std::vector<DeviceId>, double>, CollectiveAlgorithm> picked_;
};

}  // namespace placesim
