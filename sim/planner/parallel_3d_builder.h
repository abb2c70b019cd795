// Data x tensor x pipeline ("3D") parallel plans (docs/tensor-parallel.md): `data` replicas of a
// pipeline of `pipeline` stages (split and scheduled as in pipeline_builder.h), each stage's ops
// run by a tensor-parallel group of `tensor` devices in the Megatron style (tensor_parallel.h):
// every rank computes 1/t of the split ops, the group all-reduces each row-parallel output in
// forward and each column-parallel input gradient in backward (2 + 2 per transformer layer).
// With virtual_stages V > 1 (interleaved 1F1B) the model is split into pipeline x V chunks,
// chunk c on stage c mod pipeline, scheduled by interleaved_schedule (pipeline_builder.h).
// After the last micro-batch, each (stage, rank)'s gradients are all-reduced in buckets across
// the data-parallel replicas, then every device updates its shard once. A forward task holds
// the activations its op's backward reads (Korthikanti et al. 2022) until that backward.
#pragma once

#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// `notes` receives the split and which devices form which tensor, pipeline and data-parallel
/// group. Throws SpecError (naming the "parallelism" option) when the tensor size does not divide an
/// attention op's heads, a stage (interleaved: a model chunk) gets no op, or a given algorithm
/// cannot run on a group.
ExecutionPlan build_parallel_3d_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                     const ParallelismOptions& options, const std::string& name,
                                     std::vector<std::string>* notes);

/// The tasks that close micro-batch 0's forward and backward slot of each model chunk on its
/// stage's representative (replica 0, tensor rank 0), kNone where a chunk has no such slot (no
/// backward in inference), and where the updates begin. Without interleaving a chunk is a stage.
struct PipelineCells {
  static constexpr TaskId kNone = static_cast<TaskId>(-1);
  std::vector<TaskId> forward_done;   ///< by model chunk (chunk c on stage c mod pipeline)
  std::vector<TaskId> backward_done;  ///< by model chunk
  /// The first of the tasks after every slot (all-reduces, updates); kNone in inference.
  TaskId first_update_task = kNone;
  /// By stage: what of its representative's static memory (ExecutionPlan::static_memory) its
  /// experts hold, already divided over their expert shard group
  /// (ParallelismOptions::expert_zero_shards) where the rest is over the ZeRO shard group. Zeros
  /// without experts spread over replicas.
  std::vector<StaticMemory> expert_static_memory;
};

/// A cell plan, for the closed-form tier (sim/analytical/pipeline_closed_form.h): the plan of one
/// micro-batch (costs still 1/M of the batch) of one step through every stage, one tensor rank of
/// one replica per stage as under symmetry, with the data-parallel all-reduces and updates after
/// it. Needs identical devices and no jitter, as symmetry does, and throws SpecError at the
/// run option "simulation/tier" otherwise; only the analytical engine times it, so its collectives take
/// any algorithm (the strategy's, else the fastest estimate), not rings only as symmetry's.
ExecutionPlan build_parallel_3d_cell_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                          const ParallelismOptions& options, PipelineCells* cells);

}  // namespace placesim
