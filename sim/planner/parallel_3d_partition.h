// Parallel3dPartition: what a 3D strategy makes of each op before any task exists: its tensor
// role and the shard one rank runs, what its forward keeps for backward, its model chunk and
// pipeline stage, and the weights tied across stages (a reader holding a copy of its owner's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/planner/expert_parallel.h"
#include "sim/planner/parallel_3d_layout.h"
#include "sim/planner/step_emitter.h"
#include "sim/planner/tensor_parallel.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct Parallel3dPartition {
  std::vector<TensorRole> roles;        ///< by OpId
  std::vector<Op> shard;                ///< by OpId: what one tensor (and context) rank runs and holds
  std::vector<double> saved;            ///< by OpId: activation bytes its backward reads (whole batch)
  /// By OpId, with context parallelism: the keys and values of the whole sequence that a context
  /// group gathers for this attention, per tensor rank (whole batch); 0 for other ops.
  std::vector<double> gathered_key_values;
  std::vector<bool> recomputed;         ///< by OpId: selective recomputation re-runs its forward
  std::vector<bool> holds_checkpoint;   ///< by OpId: keeps its saved input even with recomputation
  std::vector<size_t> chunk_of;         ///< by OpId: model chunk (its stage without interleaving)
  std::vector<size_t> stage_of;         ///< by OpId: the pipeline stage that runs it
  std::vector<std::optional<OpId>> copy_of;  ///< by OpId: the owner whose weights a tied reader copies
  std::vector<bool> tied;               ///< by OpId: owner or reader of a tied weight
  std::vector<std::pair<OpId, OpId>> ties;                 ///< (reader, owner)
  std::vector<std::pair<int64_t, int64_t>> tied_stages;    ///< (owner's stage, reader's stage)
  size_t split_ops = 0;                 ///< ops a tensor group splits
  /// Expert parallelism: the mixture-of-experts layers (found only when `expert_ranks` > 1), and
  /// by layer the bytes each rank sends in one of its all-to-alls, per tensor rank (whole batch).
  ExpertBranches experts;
  std::vector<double> expert_exchange;
  int64_t expert_ranks = 1;  ///< ParallelismOptions::expert
  /// ZeRO: the holders of an expert its parameters, gradients and optimizer state divide over
  /// (Parallel3dLayout::expert_shard_group): all of them (data / expert x context) with full
  /// sharding, those inside one shard group with FSDP's hybrid sharding; 1 without ZeRO.
  int64_t expert_shards = 1;
  int64_t context_ranks = 1;  ///< ParallelismOptions::context

  /// Whether op v is an expert's, spread over an expert group (only with expert_ranks > 1).
  bool expert_op(OpId v) const { return expert_ranks > 1 && experts.layer_of[v] >= 0; }
  /// The rank of replica `replica` (data x context index) in its expert group.
  int64_t expert_rank(int64_t replica) const { return replica / context_ranks % expert_ranks; }
  /// Whether replica `replica` runs and holds op v: every op but the other expert ranks' experts.
  bool runs(OpId v, int64_t replica) const;

  /// The parameters op v holds: its own shard, or the copy of the weights it reads.
  Op holder(OpId v, const OpGraph& graph) const;
  /// Bytes of the parameters op v holds.
  double held_bytes(OpId v) const;
};

/// Splits `graph` for `options` over the emitter's selected ops. Throws SpecError (naming
/// the "parallelism" option) when the tensor size does not divide an attention op's heads, selective and
/// full recomputation are both asked for, a stage (interleaved: a model chunk) gets no op, or an
/// expert group does not divide the data-parallel replicas or a layer's experts. With expert
/// parallelism each MoE layer (dispatches, experts, combine) runs on one chunk, its combine's.
/// `notes` (may be null) receives one line per tied weight.
Parallel3dPartition partition_parallel_3d(const OpGraph& graph, const RunOptions& run, const ParallelismOptions& options,
                                          const StepEmitter& emitter, const Parallel3dLayout& layout,
                                          std::vector<std::string>* notes);

}  // namespace placesim
