// Parallel3dSlotEmitter: writes one replica's pipeline slots of one step in a 3D plan: the
// forward or backward of one micro-batch through one model chunk on every tensor rank of its
// stage, with the transfers between stages (or Megatron's scatter/gather), the tensor-parallel
// all-reduces and ZeRO 3's parameter all-gathers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/planner/parallel_3d_emission.h"

namespace placesim {

/// ZeRO 3: the all-gather of an op's parameters by (shard group, micro-batch, op, rank, forward),
/// shared by the group's replicas within one step.
using GatheredParameters = std::map<std::tuple<int64_t, int64_t, OpId, int64_t, bool>, TaskId>;

/// By (micro-batch, op): one task id per tensor rank.
using RankTasks = std::vector<std::vector<std::vector<TaskId>>>;

class Parallel3dSlotEmitter {
 public:
  /// Replica `replica` (an index below emission->simulated_replicas) of step `step`.
  Parallel3dSlotEmitter(Parallel3dEmission* emission, int64_t step, int64_t replica, GatheredParameters* gathered);

  /// Micro-batch m's forward (backward) through model chunk c, on stage c mod stages. Returns,
  /// per simulated rank, the tasks of the slot (the caller closes each with a marker).
  std::vector<std::vector<TaskId>> forward(int64_t m, int64_t c);
  std::vector<std::vector<TaskId>> backward(int64_t m, int64_t c);

  /// Each op's backward tasks by (micro-batch, op), one per simulated rank.
  const RankTasks& backward_tasks() const { return backward_task_; }
  /// "r3/" in a data-parallel plan, "" otherwise.
  const std::string& replica_prefix() const { return replica_prefix_; }
  /// The task's replica field: the replica index, or -1 without data parallelism.
  int64_t replica_field() const { return replica_; }

 private:
  bool scatters(double bytes_per_rank, double full_bytes) const;
  std::vector<TaskId> scatter_gather(const std::string& tensor, int64_t from, int64_t to, double bytes,
                                     const std::function<std::vector<TaskId>(int64_t)>& ready_on_rank,
                                     const std::string& gather_name, const std::string& op_name);
  TaskId gather(int64_t m, int64_t s, OpId v, int64_t r, bool forward, std::optional<TaskId>* chain);
  /// Bytes a sequence-parallel all-gather of `bytes` (at the run's element size) moves for
  /// `consumer`: half under fp8 where the consumer's GEMM computes in FP8 (Transformer Engine
  /// gathers its FP8 operand), `bytes` for any other op and for none (null).
  double sequence_gather_bytes(double bytes, const Op* consumer) const;
  /// The all-gather that follows a reduce-scatter of op v's tensors: its bytes for the GEMM that
  /// reads what it gathers, the nearest GEMM downstream of v in forward (the next layer's, or the
  /// output layer after the last), upstream of v for an input gradient (the previous layer's,
  /// none before the first: the embedding's gradient, gathered bf16).
  double gather_bytes_after(OpId v, bool downstream, double bytes);
  /// The nearest GEMM-kind op after (downstream) or before op v by data edges, through the ops
  /// between (dropout, residual adds, norms); null when none. Kept per op and direction.
  const Op* nearest_gemm(OpId v, bool downstream);
  /// Sequence parallelism: the all-gather of column-parallel op v's sequence-sharded input in
  /// its backward, for the weight gradient, `tokens` the share of the step's tokens a rank's
  /// tensors hold (scale / context); nullopt when v reads no such input.
  std::optional<TaskId> regather_sequence_input(int64_t m, int64_t s, OpId v, double tokens);
  /// Megatron's g (a row-parallel output in forward, again under full recomputation) and f (a
  /// column-parallel input's gradient in backward) over stage s's tensor group, after `deps`: an
  /// all-reduce named `prefix` "tp-allreduce/" `what` op; under sequence parallelism a
  /// reduce-scatter to the sequence shards ("sp-reducescatter/") and the all-gather back
  /// ("sp-allgather/"), each priced as itself, added to every cell. Returns the last task.
  TaskId tensor_reduction(const std::string& prefix, const std::string& what, int64_t s, OpId v, double bytes,
                          std::vector<TaskId> deps, std::vector<std::vector<TaskId>>* cells);
  /// Transformer Engine's userbuffers overlap (ParallelismOptions::tensor_comm_overlap) applies:
  /// sequence parallelism over a tensor group of two or more.
  bool overlaps_tensor_collectives() const;
  /// Whether op v runs in Transformer Engine, whose userbuffers overlap its collectives: a
  /// linear layer's GEMM (kernel_precision.h's linear_layer_gemm; Megatron-Core's output layer
  /// is its own ColumnParallelLinear).
  bool transformer_engine_gemm(OpId v) const;
  /// Under the overlap: bytes of the sequence-sharded tensors column op v reads, which it
  /// all-gathers itself (0 for any other op).
  double sequence_input_bytes(OpId v, double tokens) const;
  /// Under the overlap, the all-gather an op makes of a sequence-sharded tensor (forward: a column
  /// op's input; backward: a row op's output gradient), after `deps`: beside a Transformer Engine
  /// GEMM by ring exchange on the copy engines (its `held` tasks go on without it; their
  /// consumers wait for it, overlapped_), else before the op (`held` wait for it). Adds it to every
  /// cell and returns it.
  TaskId overlapped_gather(const std::string& name, int64_t s, OpId v, double bytes, std::vector<Task>* held,
                           std::vector<std::vector<TaskId>>* cells);
  /// A collective moved by Transformer Engine's userbuffers: NCCL's transport without its share of
  /// the SMs (the copy engines move a ring exchange; a pipelined reduce-scatter's SMs are the
  /// GEMM's margin, counted in the GEMM's time).
  void on_userbuffers(TaskId collective);
  /// What op u's consumers wait for, forward or backward, on rank r: its ready task and the
  /// collective overlapping its GEMM, if any.
  void add_ready(const RankTasks& ready, const std::vector<std::map<OpId, TaskId>>& overlapped, int64_t m, OpId u,
                 int64_t r, std::vector<TaskId>* deps) const;
  /// Every dependency of `tasks`, in order, repeats kept.
  std::vector<TaskId> deps_of(const std::vector<TaskId>& tasks) const;
  /// Context parallelism: the all-gather of attention v's keys and values (forward) or the
  /// reduce-scatter of their gradients (backward) over rank r's context group, after `deps`.
  /// One task per group: the group's first replica emits it, the others add their `deps`.
  TaskId context_exchange(int64_t m, int64_t s, OpId v, int64_t r, bool forward, const std::vector<TaskId>& deps);
  /// Expert parallelism: the all-to-all `exchange` of MoE layer `layer` over rank r's expert
  /// group, with `deps` added to it. One task per group: the first replica to need it emits it
  /// (and puts it in `cell`), the others add their `deps`.
  TaskId expert_exchange(int64_t m, int64_t s, int64_t layer, int64_t r, ExpertExchange exchange,
                         const std::vector<TaskId>& deps, std::vector<TaskId>* cell);
  /// Expert parallelism: adds op v's `ready` tasks (one per rank) to the all-to-all its result
  /// feeds, if any: forward, a dispatch's tokens or an expert's output; backward, the combine's
  /// gradient or an expert's input gradient.
  void feed_expert_exchange(int64_t m, int64_t s, OpId v, bool forward, const std::vector<TaskId>& ready,
                            std::vector<std::vector<TaskId>>* cells);
  /// Appends rank r's compute task of op v to the slot: after the stage's previous slot and, under
  /// ZeRO 3, the gather of v's parameters (chained after the slot's previous gather); both go
  /// into `cell`. Returns the task's id.
  TaskId add_to_slot(Task task, int64_t m, int64_t s, OpId v, int64_t r, bool forward,
                     std::optional<TaskId>* gather_chain, std::vector<TaskId>* cell);

  Parallel3dEmission& e_;
  const int64_t step_;
  const int64_t d_;
  GatheredParameters& gathered_;
  const std::string suffix_;
  const std::string replica_prefix_;
  const int64_t replica_;
  RankTasks forward_task_;
  RankTasks forward_ready_;
  RankTasks backward_task_;
  RankTasks backward_ready_;
  /// By micro-batch: the transfer bringing (producer, stage, rank)'s output to a stage.
  std::vector<std::map<std::tuple<OpId, int64_t, int64_t>, TaskId>> received_;
  /// By micro-batch: what each rank's consumers of (producer, stage) wait for after a scatter/gather.
  std::vector<std::map<std::pair<OpId, int64_t>, std::vector<TaskId>>> scattered_inputs_;
  /// By micro-batch: the same for gradients, by (op, consumer).
  std::vector<std::map<std::pair<OpId, OpId>, std::vector<TaskId>>> gathered_gradients_;
  /// By micro-batch: the collective running beside op v's GEMM under the userbuffers overlap
  /// (forward: its input's all-gather; backward: its output gradient's all-gather, or its input
  /// gradient's reduce-scatter), which v's consumers wait for as well as v.
  std::vector<std::map<OpId, TaskId>> overlapped_forward_;
  std::vector<std::map<OpId, TaskId>> overlapped_backward_;
  /// nearest_gemm's answers by (op, downstream).
  std::map<std::pair<OpId, bool>, const Op*> nearest_gemm_;
};

}  // namespace placesim
