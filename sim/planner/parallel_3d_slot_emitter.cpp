#include "sim/planner/parallel_3d_slot_emitter.h"

#include <algorithm>
#include <deque>

#include "sim/plan/kernel_precision.h"
#include "sim/planner/tensor_parallel.h"

namespace placesim {
namespace {

// Transformer Engine's userbuffers overlap (ParallelismOptions::tensor_comm_overlap; TE v1.8
// 3ec998e9 / v1.9 e79d915a, transformer_engine/pytorch/module/base.py initialize_ub and
// csrc/comm_gemm_overlap.h; docs/tensor-parallel.md, "Communication overlapped with the GEMMs").
// A row-parallel GEMM's reduce-scatter runs in this many chunks: the "pipeline" method's
// num_splits, 4 by default in TE v1.9 (base.py) and in every H100 configuration of
// NeMo-Framework-Launcher (launcher_scripts/conf/training/tp_overlap/ub_cfg_h100_*.yaml).
constexpr int kUserbuffersSplits = 4;
// The SMs that reduce-scatter's kernels take from the GEMM beside it (set_sm_margin: the GEMM
// runs on the GPU's SMs less these): TE v1.8's add_ub default num_sm 16 (base.py); the launcher's
// H100 configurations give proj_fprop / fc2_fprop 16 to 24 with set_sm_margin 1.
constexpr double kUserbuffersReduceScatterSms = 16;
constexpr const char* kUserbuffersTransport = "te_userbuffers";

}  // namespace

Parallel3dSlotEmitter::Parallel3dSlotEmitter(Parallel3dEmission* emission, int64_t step, int64_t replica,
                                             GatheredParameters* gathered)
    : e_(*emission),
      step_(step),
      d_(replica),
      gathered_(*gathered),
      suffix_(StepEmitter::suffix(step)),
      replica_prefix_(emission->replicas > 1 ? StepEmitter::prefix(replica) : ""),
      replica_(emission->replicas > 1 ? replica : -1),
      forward_task_(emission->micro_batches, std::vector<std::vector<TaskId>>(emission->graph.size())),
      forward_ready_(emission->micro_batches, std::vector<std::vector<TaskId>>(emission->graph.size())),
      backward_task_(emission->micro_batches, std::vector<std::vector<TaskId>>(emission->graph.size())),
      backward_ready_(emission->micro_batches, std::vector<std::vector<TaskId>>(emission->graph.size())),
      received_(emission->micro_batches),
      scattered_inputs_(emission->micro_batches),
      gathered_gradients_(emission->micro_batches),
      overlapped_forward_(emission->micro_batches),
      overlapped_backward_(emission->micro_batches) {}

// Megatron's scatter/gather (ParallelismOptions::scatter_gather): a tensor that each rank holds
// whole (`bytes` per rank equal to the full tensor's, or with context parallelism to the rank's
// 1/c of it) crosses between stages as 1/t per rank, then a ring all-gather of the whole tensor
// over the receiving stage's tensor group rebuilds it.
bool Parallel3dSlotEmitter::scatters(double bytes_per_rank, double full_bytes) const {
  const double whole_on_rank = full_bytes / static_cast<double>(e_.options.context);
  return e_.options.scatter_gather && e_.ranks > 1 && full_bytes > 0 && bytes_per_rank >= whole_on_rank;
}

// What each rank's consumers wait for: the all-gather, whose output (the whole tensor) is on
// every rank of the group (sim/timeline/buffer_memory.h).
std::vector<TaskId> Parallel3dSlotEmitter::scatter_gather(const std::string& tensor, int64_t from, int64_t to, double bytes,
                          const std::function<std::vector<TaskId>(int64_t)>& ready_on_rank, const std::string& gather_name,
                          const std::string& op_name) {
  std::vector<TaskId> pieces;
  for (int64_t r = 0; r < e_.simulated_ranks; ++r) {
    pieces.push_back(e_.stage_transfer(tensor + e_.rank_name(r) + "/scatter", e_.device(d_, from, r), e_.device(d_, to, r),
                                       bytes / static_cast<double>(e_.ranks), ready_on_rank(r), step_, replica_));
  }
  const TaskId gathered_id = e_.collective(gather_name, e_.layout.tensor_group(d_, to), bytes, std::move(pieces), step_, op_name,
                                        CollectiveKind::kAllGather);
  e_.emitter.at(gathered_id).output_bytes = bytes;  // the whole tensor again, on every rank
  return std::vector<TaskId>(static_cast<size_t>(e_.simulated_ranks), gathered_id);
}

// ZeRO 3 (FSDP): an op's parameters are all-gathered over the shard group before its forward
// and again before its backward, one gather after another ahead of the compute (prefetch), from
// the start of the slot: a ring all-gather of the op's parameters (docs/llm-planning.md).
TaskId Parallel3dSlotEmitter::gather(int64_t m, int64_t s, OpId v, int64_t r, bool forward, std::optional<TaskId>* chain) {
  const Parallel3dPartition& P = e_.partition;
  // An expert's parameters are sharded over the replicas holding it (its expert rank's) in its
  // shard group, keyed apart from the dense shard groups.
  const bool expert = P.expert_op(v);
  const int64_t group = d_ / e_.shards;
  auto key = std::make_tuple(expert ? -1 - (group * P.expert_ranks + P.expert_rank(d_)) : group, m, v, r, forward);
  if (auto it = gathered_.find(key); it != gathered_.end()) return it->second;
  std::vector<TaskId> deps = e_.previous_slot_ends[e_.holder(d_, s)][s][r];
  if (*chain) deps.push_back(**chain);
  if (const auto& update = e_.previous_update[e_.holder(d_, s)][v][r]) deps.push_back(*update);
  const TaskId id = e_.collective(replica_prefix_ + "mb" + std::to_string(m) + (forward ? "/fwd" : "/bwd") +
                                   "/zero3-allgather/" + e_.graph.op(v).name + e_.rank_name(r) + suffix_,
                               expert ? e_.layout.expert_shard_group(d_, s, r) : e_.layout.shard_group(d_, s, r),
                               P.held_bytes(v), std::move(deps), step_,
                               e_.graph.op(v).name, CollectiveKind::kAllGather);
  gathered_.emplace(key, id);
  return id;
}

TaskId Parallel3dSlotEmitter::context_exchange(int64_t m, int64_t s, OpId v, int64_t r, bool forward,
                                               const std::vector<TaskId>& deps) {
  const int64_t group = d_ / e_.options.context;
  auto key = std::make_tuple(step_, group, m, v, r, forward);
  if (auto it = e_.context_collectives.find(key); it != e_.context_collectives.end()) {
    Task& shared = e_.emitter.at(it->second);
    shared.deps.insert(shared.deps.end(), deps.begin(), deps.end());
    return it->second;
  }
  const double bytes = e_.partition.gathered_key_values[v] * e_.scale;
  const std::string& op_name = e_.graph.op(v).name;
  const TaskId id = e_.collective(
      replica_prefix_ + "mb" + std::to_string(m) + (forward ? "/cp-allgather/" : "/cp-reducescatter/grad/") + op_name +
          e_.rank_name(r) + suffix_,
      e_.layout.context_group(d_, s, r), bytes, deps, step_, op_name,
      forward ? CollectiveKind::kAllGather : CollectiveKind::kReduceScatter);
  if (forward) e_.emitter.at(id).output_bytes = bytes;  // the whole sequence's K and V, on every rank
  e_.context_collectives.emplace(key, id);
  return id;
}

TaskId Parallel3dSlotEmitter::expert_exchange(int64_t m, int64_t s, int64_t layer, int64_t r, ExpertExchange exchange,
                                              const std::vector<TaskId>& deps, std::vector<TaskId>* cell) {
  const int64_t context = e_.options.context;
  const int64_t group = d_ / context / e_.options.expert * context + d_ % context;
  auto key = std::make_tuple(step_, group, m, layer, r, exchange);
  if (auto it = e_.expert_collectives.find(key); it != e_.expert_collectives.end()) {
    Task& shared = e_.emitter.at(it->second);
    shared.deps.insert(shared.deps.end(), deps.begin(), deps.end());
    return it->second;
  }
  const Parallel3dPartition& P = e_.partition;
  const OpId combine = P.experts.layers[static_cast<size_t>(layer)].combine;
  const std::string& op_name = e_.graph.op(combine).name;
  static const char* const kNames[] = {"dispatch", "combine", "grad/combine", "grad/dispatch"};
  const TaskId id = e_.collective(replica_prefix_ + "mb" + std::to_string(m) + "/ep-alltoall/" +
                                      kNames[static_cast<int>(exchange)] + "/" + op_name + e_.rank_name(r) + suffix_,
                                  e_.layout.expert_group(d_, s, r), P.expert_exchange[static_cast<size_t>(layer)] * e_.scale,
                                  deps, step_, op_name, CollectiveKind::kAllToAll);
  e_.emitter.at(id).output_bytes = P.expert_exchange[static_cast<size_t>(layer)] * e_.scale;  // the routed tokens received
  e_.expert_collectives.emplace(key, id);
  cell->push_back(id);
  return id;
}

void Parallel3dSlotEmitter::feed_expert_exchange(int64_t m, int64_t s, OpId v, bool forward,
                                                 const std::vector<TaskId>& ready,
                                                 std::vector<std::vector<TaskId>>* cells) {
  // Forward, v's result leaves by its output edges; backward, its input gradients by its input
  // edges. A dispatch feeds every expert of its layer: one all-to-all however many edges cross.
  const ExpertBranches& X = e_.partition.experts;
  std::optional<ExpertCrossing> crossed;
  for (const auto& neighbor : forward ? e_.graph.outputs(v) : e_.graph.inputs(v)) {
    if (neighbor.edge.control || crossed) continue;
    crossed = forward ? X.crossing(v, neighbor.op) : X.crossing(neighbor.op, v);
  }
  for (int64_t r = 0; crossed && r < e_.simulated_ranks; ++r) {
    expert_exchange(m, s, crossed->layer, r, crossed->exchange(forward), {ready[static_cast<size_t>(r)]},
                    &(*cells)[static_cast<size_t>(r)]);
  }
}

TaskId Parallel3dSlotEmitter::add_to_slot(Task task, int64_t m, int64_t s, OpId v, int64_t r, bool forward,
                                          std::optional<TaskId>* gather_chain, std::vector<TaskId>* cell) {
  for (TaskId end : e_.previous_slot_ends[e_.holder(d_, s)][s][r]) task.deps.push_back(end);
  const Parallel3dPartition& P = e_.partition;
  if (e_.gathers_parameters && P.held_bytes(v) > 0 && (!P.expert_op(v) || P.expert_shards > 1)) {
    *gather_chain = gather(m, s, v, r, forward, gather_chain);
    task.deps.push_back(**gather_chain);
    cell->push_back(**gather_chain);
  }
  const TaskId id = e_.emitter.add(std::move(task));
  cell->push_back(id);
  return id;
}

// Model chunk c of micro-batch m, on stage c mod stages.
std::vector<std::vector<TaskId>> Parallel3dSlotEmitter::forward(int64_t m, int64_t c) {
  const Parallel3dPartition& P = e_.partition;
  const int64_t s = c % e_.stages;
  const std::string prefix = replica_prefix_ + "mb" + std::to_string(m) + "/";
  std::vector<std::vector<TaskId>> cells(e_.ranks);
  std::vector<std::optional<TaskId>> gather_chain(e_.ranks);
  const ExpertBranches& X = P.experts;
  const bool experts = P.expert_ranks > 1;
  for (OpId v : e_.emitter.order()) {
    if (!e_.emitter.selected(v) || static_cast<int64_t>(P.chunk_of[v]) != c || !P.runs(v, d_)) continue;
    const Op& op = e_.graph.op(v);
    // Under the userbuffers overlap a column op gathers its sequence-sharded input itself.
    const double gathered_bytes = sequence_input_bytes(v, e_.scale / static_cast<double>(e_.options.context));
    std::vector<Task> held;
    for (int64_t r = 0; r < e_.simulated_ranks; ++r) {
      Task task = op_compute_task(P.shard[v], Phase::kForward, e_.emitter.step_kind(), e_.device(d_, s, r), step_, e_.scale);
      task.name = prefix + "fwd/" + op.name + e_.rank_name(r) + suffix_;
      task.replica = replica_;
      task.output_bytes = P.saved[v] * e_.scale;  // what this op's backward will read
      for (const auto& input : e_.graph.inputs(v)) {
        OpId u = input.op;
        if (!e_.emitter.selected(u)) continue;
        if (experts && !input.edge.control) {
          // Expert parallelism: an expert reads the tokens the group's dispatch all-to-all
          // brought; the combine reads the outputs the combine all-to-all brought back.
          if (const auto crossed = X.crossing(u, v)) {
            const TaskId exchanged = expert_exchange(m, s, crossed->layer, r, crossed->exchange(true), {}, &cells[r]);
            if (std::find(task.deps.begin(), task.deps.end(), exchanged) == task.deps.end()) task.deps.push_back(exchanged);
            continue;
          }
        }
        const int64_t from = static_cast<int64_t>(P.stage_of[u]);
        if (input.edge.control || from == s) {
          add_ready(forward_ready_, overlapped_forward_, m, u, r, &task.deps);
          continue;
        }
        const std::string tensor = "mb" + std::to_string(m) + "/" + e_.graph.op(u).name;
        if (scatters(P.shard[u].output_bytes, e_.graph.op(u).output_bytes)) {
          auto scattered = scattered_inputs_[m].find({u, s});
          if (scattered == scattered_inputs_[m].end()) {
            scattered = scattered_inputs_[m]
                           .emplace(std::make_pair(u, s),
                                    scatter_gather(tensor, from, s, P.shard[u].output_bytes * e_.scale,
                                                   [&](int64_t rank) {
                                                     std::vector<TaskId> ready;
                                                     add_ready(forward_ready_, overlapped_forward_, m, u, rank, &ready);
                                                     return ready;
                                                   },
                                                   prefix + "pp-allgather/" + e_.graph.op(u).name + suffix_,
                                                   e_.graph.op(u).name))
                           .first;
          }
          task.deps.push_back(scattered->second[static_cast<size_t>(r)]);
          continue;
        }
        auto key = std::make_tuple(u, s, r);
        auto it = received_[m].find(key);
        if (it == received_[m].end()) {
          std::vector<TaskId> ready;
          add_ready(forward_ready_, overlapped_forward_, m, u, r, &ready);
          TaskId id = e_.stage_transfer(tensor + e_.rank_name(r), e_.device(d_, from, r), task.device,
                                        P.shard[u].output_bytes * e_.scale, std::move(ready), step_, replica_);
          it = received_[m].emplace(key, id).first;
        }
        task.deps.push_back(it->second);
      }
      // The weights as the device holds them now (with replicated stages, another stream's
      // update on this stage replica counts too).
      const auto& update = e_.previous_update[e_.holder(d_, s)][v][r];
      if (P.held_bytes(v) > 0 && update) task.deps.push_back(*update);
      if (P.gathered_key_values[v] > 0) {  // context parallelism: the whole sequence's K and V first
        const TaskId gathered = context_exchange(m, s, v, r, /*forward=*/true, task.deps);
        task.deps.push_back(gathered);
        cells[r].push_back(gathered);
      }
      if (P.roles[v] == TensorRole::kRow && overlaps_tensor_collectives() && transformer_engine_gemm(v)) {
        // The pipelined reduce-scatter's SMs are set aside from the GEMM (set_sm_margin).
        const double sms = static_cast<double>(e_.cluster.device(task.device).spec.sm_count);
        if (sms > kUserbuffersReduceScatterSms) task.compute_scale *= sms / (sms - kUserbuffersReduceScatterSms);
      }
      if (gathered_bytes > 0) {
        held.push_back(std::move(task));
      } else {
        forward_task_[m][v].push_back(add_to_slot(std::move(task), m, s, v, r, /*forward=*/true, &gather_chain[r], &cells[r]));
      }
    }
    if (gathered_bytes > 0) {
      const TaskId gathered = overlapped_gather(prefix + "sp-allgather/" + op.name + suffix_, s, v, gathered_bytes, &held, &cells);
      if (transformer_engine_gemm(v)) overlapped_forward_[m][v] = gathered;
      for (int64_t r = 0; r < e_.simulated_ranks; ++r) {
        forward_task_[m][v].push_back(add_to_slot(std::move(held[static_cast<size_t>(r)]), m, s, v, r, /*forward=*/true,
                                                  &gather_chain[r], &cells[r]));
      }
    }
    forward_ready_[m][v] = forward_task_[m][v];
    if (P.roles[v] == TensorRole::kRow && e_.ranks > 1) {
      // Megatron's g: the partial sums of a row-parallel output are all-reduced in forward.
      const TaskId reduced = tensor_reduction(prefix, "", s, v, P.shard[v].output_bytes * e_.scale, forward_task_[m][v], &cells);
      forward_ready_[m][v].assign(e_.ranks, reduced);
    }
    if (experts) feed_expert_exchange(m, s, v, /*forward=*/true, forward_ready_[m][v], &cells);
  }
  return cells;
}

// Bytes of a sequence-parallel all-gather of `bytes` (counted at the run's element size): under
// fp8 what is gathered is a Transformer Engine GEMM's FP8 operand, 1 byte per element (TE v1.8:
// LayerNormLinear writes the norm's output in FP8 and gathers it, forward and again for the
// weight gradient; a row-parallel layer's output gradient is cast to FP8 before its gather,
// grad_output_preprocess); the reduce-scatters move the bf16 sums. docs/tensor-parallel.md.
double Parallel3dSlotEmitter::sequence_gather_bytes(double bytes, const Op* consumer) const {
  return consumer ? bytes * kernel_bytes_scale(e_.run.precision, consumer->kind, consumer->kernel.get()) : bytes;
}

double Parallel3dSlotEmitter::gather_bytes_after(OpId v, bool downstream, double bytes) {
  if (e_.run.precision != Precision::kFp8) return bytes;  // every gather moves the run's elements
  return sequence_gather_bytes(bytes, nearest_gemm(v, downstream));
}

const Op* Parallel3dSlotEmitter::nearest_gemm(OpId v, bool downstream) {
  const auto known = nearest_gemm_.find({v, downstream});
  if (known != nearest_gemm_.end()) return known->second;
  const OpGraph& graph = e_.graph;
  std::vector<bool> seen(graph.size(), false);
  std::deque<OpId> frontier{v};
  seen[v] = true;
  const Op* found = nullptr;
  while (!frontier.empty() && !found) {
    const OpId at = frontier.front();
    frontier.pop_front();
    for (const auto& next : downstream ? graph.outputs(at) : graph.inputs(at)) {
      if (next.edge.control || seen[next.op]) continue;
      seen[next.op] = true;
      if (is_gemm_kind(graph.op(next.op).kind)) {
        found = &graph.op(next.op);
        break;
      }
      frontier.push_back(next.op);
    }
  }
  nearest_gemm_.emplace(std::make_pair(v, downstream), found);
  return found;
}

std::vector<TaskId> Parallel3dSlotEmitter::deps_of(const std::vector<TaskId>& tasks) const {
  std::vector<TaskId> deps;
  for (TaskId id : tasks) {
    for (TaskId dep : e_.emitter.at(id).deps) deps.push_back(dep);
  }
  return deps;
}

bool Parallel3dSlotEmitter::overlaps_tensor_collectives() const {
  return e_.options.tensor_comm_overlap && e_.options.sequence_parallel && e_.ranks > 1;
}

bool Parallel3dSlotEmitter::transformer_engine_gemm(OpId v) const {
  return linear_layer_gemm(e_.graph.op(v).kind, e_.graph.op(v).kernel.get());
}

// A column op's input that sequence parallelism left sharded: a sequence op's output, or a row
// op's reduce-scattered one.
double Parallel3dSlotEmitter::sequence_input_bytes(OpId v, double tokens) const {
  const Parallel3dPartition& P = e_.partition;
  if (!overlaps_tensor_collectives() || P.roles[v] != TensorRole::kColumn) return 0;
  double bytes = 0;
  for (const auto& input : e_.graph.inputs(v)) {
    if (input.edge.control) continue;
    if (P.roles[input.op] == TensorRole::kSequence || P.roles[input.op] == TensorRole::kRow) bytes += input.edge.bytes * tokens;
  }
  return bytes;
}

// Transformer Engine v1.8/v1.9 (3ec998e9 / e79d915a), module/base.py initialize_ub: the
// all-gathers before a column-parallel GEMM (qkv_fprop, fc1_fprop) and of a row-parallel GEMM's
// output gradient (proj_dgrad, fc2_dgrad) are "ring_exchange": the GEMM runs as one chunk per
// rank, each while the next chunk arrives from the ring neighbour, copied by cudaMemcpyAsync on
// the copy engines (use_ce; csrc/comm_gemm_overlap.h, UbufP2PCommOverlap::split_overlap_ag).
// Nothing is exposed while a chunk's exchange is shorter than its GEMM; here the gather runs
// beside the whole GEMM and the op's consumers wait for both, max(GEMM, gather) (the chunked
// form's (t - 1) max(GEMM/t, gather/(t - 1)) + GEMM/t, short of it by at most GEMM/t when the
// gather is the longer). The output layer and the embedding are not TE modules: their
// all-gather runs before them, as without the overlap.
TaskId Parallel3dSlotEmitter::overlapped_gather(const std::string& name, int64_t s, OpId v, double bytes,
                                                std::vector<Task>* held, std::vector<std::vector<TaskId>>* cells) {
  const bool beside = transformer_engine_gemm(v);
  std::vector<TaskId> deps;
  for (int64_t r = 0; r < e_.simulated_ranks; ++r) {
    const Task& task = (*held)[static_cast<size_t>(r)];
    deps.insert(deps.end(), task.deps.begin(), task.deps.end());
    const auto& ends = e_.previous_slot_ends[e_.holder(d_, s)][s][r];
    deps.insert(deps.end(), ends.begin(), ends.end());
  }
  const std::string& op_name = e_.graph.op(v).name;
  const TaskId gathered = e_.collective(name, e_.layout.tensor_group(d_, s), sequence_gather_bytes(bytes, &e_.graph.op(v)),
                                        std::move(deps), step_, op_name, CollectiveKind::kAllGather);
  if (beside) {
    on_userbuffers(gathered);
  } else {
    for (Task& task : *held) task.deps.push_back(gathered);
  }
  for (auto& cell : *cells) cell.push_back(gathered);
  return gathered;
}

void Parallel3dSlotEmitter::on_userbuffers(TaskId collective) {
  Task& task = e_.emitter.at(collective);
  if (task.transport < 0) return;
  Transport userbuffers = e_.emitter.transport(task.transport);
  userbuffers.source = "Transformer Engine's userbuffers (module/base.py initialize_ub, TE v1.8/v1.9) at " +
                       userbuffers.id + "'s rate; no share of the SMs while it overlaps (ring exchanges on the copy "
                       "engines; a pipelined reduce-scatter's SMs are set aside from its GEMM)";
  userbuffers.id = kUserbuffersTransport;
  userbuffers.gpu_compute_share = 0;
  task.transport = e_.emitter.transport_index(userbuffers);
}

void Parallel3dSlotEmitter::add_ready(const RankTasks& ready, const std::vector<std::map<OpId, TaskId>>& overlapped,
                                      int64_t m, OpId u, int64_t r, std::vector<TaskId>* deps) const {
  deps->push_back(ready[m][u][r]);
  if (overlapped[m].empty()) return;
  if (auto it = overlapped[m].find(u); it != overlapped[m].end()) deps->push_back(it->second);
}

// Sequence parallelism keeps a column-parallel op's input sharded over the sequence, so its
// backward all-gathers that input again for the weight gradient, beside the input-gradient GEMM
// (Megatron's LinearWithGradAccumulationAndAsyncCommunication.backward; Korthikanti et al. 2022,
// section 4.2.2): one all-gather of the whole input, from when the op's backward may start. The
// input gradient's reduce-scatter (tensor_reduction) follows both. nullopt when the op
// reads no sequence-sharded tensor. An expert's GEMMs read the tokens its dispatch routed, which
// Megatron-Core's token dispatcher gathered whole before routing; they keep them, and gather
// nothing in backward.
std::optional<TaskId> Parallel3dSlotEmitter::regather_sequence_input(int64_t m, int64_t s, OpId v, double tokens) {
  const Parallel3dPartition& P = e_.partition;
  double bytes = 0;
  for (const auto& input : e_.graph.inputs(v)) {
    if (input.edge.control || P.roles[input.op] != TensorRole::kSequence) continue;
    if (e_.graph.op(input.op).type == "MoeDispatch") return std::nullopt;
    bytes += input.edge.bytes * tokens;
  }
  if (bytes <= 0) return std::nullopt;
  const std::string& name = e_.graph.op(v).name;
  return e_.collective(replica_prefix_ + "mb" + std::to_string(m) + "/sp-allgather/grad-input/" + name + suffix_,
                       e_.layout.tensor_group(d_, s), sequence_gather_bytes(bytes, &e_.graph.op(v)),
                       deps_of(backward_task_[m][v]), step_, name,
                       CollectiveKind::kAllGather);
}

// Sequence parallelism replaces each of Megatron's all-reduces with a reduce-scatter (the sums
// leave each rank with its sequence shard) and, before the next tensor-parallel GEMM, an
// all-gather (Korthikanti et al. 2022, section 4.2.2): the same bytes as a ring all-reduce, but
// NCCL runs the two as separate collectives, whose measured curves are not an all-reduce's (on an
// NVSwitch machine NCCL's NVLS all-reduce reduces in the switch). The all-gather follows the
// reduce-scatter at once here; what runs between them in Megatron (the dropout, residual add and
// norm on the shard) is the sequence-sharded ops that wait for it.
TaskId Parallel3dSlotEmitter::tensor_reduction(const std::string& prefix, const std::string& what, int64_t s, OpId v,
                                               double bytes, std::vector<TaskId> deps,
                                               std::vector<std::vector<TaskId>>* cells) {
  const std::string& name = e_.graph.op(v).name;
  const std::vector<DeviceId> group = e_.layout.tensor_group(d_, s);
  if (overlaps_tensor_collectives() && what.empty()) {
    // Under the userbuffers overlap the consumer gathers (overlapped_gather). After a row-parallel
    // GEMM TE reduce-scatters in kUserbuffersSplits chunks, each beside the GEMM's next chunk
    // ("pipeline", UbufCommOverlap::split_overlap_rs; 4 splits: TE v1.9's default and every H100
    // configuration of NeMo-Framework-Launcher), the last one exposed after the GEMM ("exposes one
    // reduce-scatter chunk", NeMo's communication_overlap.rst).
    std::vector<TaskId> exposed_after = deps;
    double exposed_bytes = bytes;
    if (transformer_engine_gemm(v)) {
      const double splits = kUserbuffersSplits;
      const TaskId beside = e_.collective(prefix + "sp-reducescatter/userbuffers/" + name + suffix_, group,
                                          bytes * (splits - 1) / splits, deps_of(deps), step_, name,
                                          CollectiveKind::kReduceScatter);
      on_userbuffers(beside);
      for (auto& cell : *cells) cell.push_back(beside);
      exposed_after.push_back(beside);
      exposed_bytes = bytes / splits;
    }
    const TaskId scattered = e_.collective(prefix + "sp-reducescatter/" + name + suffix_, group, exposed_bytes,
                                           std::move(exposed_after), step_, name, CollectiveKind::kReduceScatter);
    if (transformer_engine_gemm(v)) on_userbuffers(scattered);
    for (auto& cell : *cells) cell.push_back(scattered);
    return scattered;
  }
  if (!e_.options.sequence_parallel) {
    const TaskId reduced = e_.collective(prefix + "tp-allreduce/" + what + name + suffix_, group, bytes, std::move(deps), step_, name);
    for (auto& cell : *cells) cell.push_back(reduced);
    return reduced;
  }
  const TaskId scattered = e_.collective(prefix + "sp-reducescatter/" + what + name + suffix_, group, bytes, std::move(deps),
                                         step_, name, CollectiveKind::kReduceScatter);
  const TaskId gathered =
      e_.collective(prefix + "sp-allgather/" + what + name + suffix_, group,
                    gather_bytes_after(v, /*downstream=*/what != "grad/", bytes), {scattered}, step_, name,
                    CollectiveKind::kAllGather);
  for (auto& cell : *cells) {
    cell.push_back(scattered);
    cell.push_back(gathered);
  }
  return gathered;
}

std::vector<std::vector<TaskId>> Parallel3dSlotEmitter::backward(int64_t m, int64_t c) {
  const Parallel3dPartition& P = e_.partition;
  const int64_t s = c % e_.stages;
  const std::string prefix = replica_prefix_ + "mb" + std::to_string(m) + "/";
  std::vector<std::vector<TaskId>> cells(e_.ranks);
  std::vector<std::optional<TaskId>> gather_chain(e_.ranks);
  const auto& order = e_.emitter.order();
  const ExpertBranches& X = P.experts;
  const bool experts = P.expert_ranks > 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    OpId v = *it;
    if (!e_.emitter.needs_gradient(v) || static_cast<int64_t>(P.chunk_of[v]) != c || !P.runs(v, d_)) continue;
    const Op& op = e_.graph.op(v);
    // Per rank, before any all-reduce; a context rank's tensors are 1/c of the sequence.
    const double tokens = e_.scale / static_cast<double>(e_.options.context);
    double input_gradient_bytes = 0;
    double full_input_gradient_bytes = 0;
    for (const auto& input : e_.graph.inputs(v)) {
      if (!e_.emitter.needs_gradient(input.op) || input.edge.control) continue;
      input_gradient_bytes += tensor_parallel_edge_bytes(input.edge.bytes, P.roles[input.op], e_.ranks) * tokens;
      full_input_gradient_bytes += input.edge.bytes * tokens;
    }
    // Under the userbuffers overlap a row op gathers its sequence-sharded output gradient itself.
    const bool gathers_gradient = overlaps_tensor_collectives() && P.roles[v] == TensorRole::kRow;
    std::vector<Task> held;
    auto place = [&](Task&& task, int64_t r) {  // rank r's backward task into its slot
      const TaskId id = add_to_slot(std::move(task), m, s, v, r, /*forward=*/false, &gather_chain[r], &cells[r]);
      backward_task_[m][v].push_back(id);
      if (!e_.run.recompute || P.holds_checkpoint[v]) e_.emitter.at(forward_task_[m][v][r]).keep_until.push_back(id);
    };
    for (int64_t r = 0; r < e_.simulated_ranks; ++r) {
      Task task = op_compute_task(P.shard[v], Phase::kBackward, e_.emitter.step_kind(), e_.device(d_, s, r), step_, e_.scale);
      if (task.kernel) task.kernel_passes = e_.emitter.backward_kernel_passes(v);
      task.name = prefix + "bwd/" + op.name + e_.rank_name(r) + suffix_;
      task.replica = replica_;
      bool waits_for_gradient = false;
      for (const auto& output : e_.graph.outputs(v)) {
        OpId consumer = output.op;
        if (experts && e_.emitter.selected(consumer) && !output.edge.control) {
          // Expert parallelism: an expert's output gradient comes back from the combine's
          // backward through an all-to-all, a dispatch's through another from the experts'.
          if (const auto crossed = X.crossing(v, consumer)) {
            const TaskId exchanged = expert_exchange(m, s, crossed->layer, r, crossed->exchange(false), {}, &cells[r]);
            if (std::find(task.deps.begin(), task.deps.end(), exchanged) == task.deps.end()) task.deps.push_back(exchanged);
            waits_for_gradient = true;
            continue;
          }
        }
        if (!e_.emitter.selected(consumer) || output.edge.control || backward_ready_[m][consumer].empty()) continue;
        waits_for_gradient = true;
        const int64_t from = static_cast<int64_t>(P.stage_of[consumer]);
        if (from == s) {
          add_ready(backward_ready_, overlapped_backward_, m, consumer, r, &task.deps);
        } else {
          const std::string tensor = "mb" + std::to_string(m) + "/grad/" + op.name;
          const double bytes = tensor_parallel_edge_bytes(output.edge.bytes, P.roles[v], e_.ranks) * tokens;
          if (scatters(bytes, output.edge.bytes * e_.scale)) {
            auto key = std::make_pair(v, consumer);
            auto gradient_gather = gathered_gradients_[m].find(key);
            if (gradient_gather == gathered_gradients_[m].end()) {
              gradient_gather =
                  gathered_gradients_[m]
                      .emplace(key, scatter_gather(
                                        tensor, from, s, bytes,
                                        [&](int64_t rank) {
                                          std::vector<TaskId> ready;
                                          add_ready(backward_ready_, overlapped_backward_, m, consumer, rank, &ready);
                                          return ready;
                                        },
                                        prefix + "pp-allgather/grad/" + op.name + "/" + e_.graph.op(consumer).name +
                                            suffix_,
                                        op.name))
                      .first;
            }
            task.deps.push_back(gradient_gather->second[static_cast<size_t>(r)]);
          } else {
            std::vector<TaskId> ready;
            add_ready(backward_ready_, overlapped_backward_, m, consumer, r, &ready);
            task.deps.push_back(e_.stage_transfer(tensor + e_.rank_name(r), e_.device(d_, from, r), task.device, bytes,
                                                  std::move(ready), step_, replica_));
          }
        }
      }
      if (!e_.run.recompute || !waits_for_gradient) task.deps.push_back(forward_task_[m][v][r]);
      if (e_.run.recompute || P.recomputed[v]) {
        task.flops += P.shard[v].forward_flops * e_.scale;
        task.memory_bytes += P.shard[v].forward_bytes * e_.scale;
        task.kernel_passes |= kForwardPass;
      }
      task.output_bytes = input_gradient_bytes;
      if (gathers_gradient) {
        held.push_back(std::move(task));
      } else {
        place(std::move(task), r);
      }
    }
    if (gathers_gradient) {
      const TaskId gathered = overlapped_gather(prefix + "sp-allgather/grad/" + op.name + suffix_, s, v,
                                                P.shard[v].output_bytes * e_.scale, &held, &cells);
      if (transformer_engine_gemm(v)) overlapped_backward_[m][v] = gathered;
      for (int64_t r = 0; r < e_.simulated_ranks; ++r) place(std::move(held[static_cast<size_t>(r)]), r);
    }
    backward_ready_[m][v] = backward_task_[m][v];
    for (int64_t r = 0; P.gathered_key_values[v] > 0 && r < e_.simulated_ranks; ++r) {
      // Context parallelism: each rank's K and V gradients cover the whole sequence; the group
      // reduce-scatters them back to the chunks their projections made.
      backward_ready_[m][v][r] = context_exchange(m, s, v, r, /*forward=*/false, {backward_task_[m][v][r]});
      cells[r].push_back(backward_ready_[m][v][r]);
    }
    if (e_.run.recompute && P.roles[v] == TensorRole::kRow && e_.ranks > 1) {
      // Full recomputation re-runs the layer's forward in backward (its FLOPs are in the
      // backward tasks above), and with it Megatron's g: the row-parallel output's all-reduce,
      // once more, before the ops upstream of it go on.
      const TaskId reduced =
          tensor_reduction(prefix, "recompute/", s, v, P.shard[v].output_bytes * e_.scale, backward_task_[m][v], &cells);
      backward_ready_[m][v].assign(e_.ranks, reduced);
    }
    if (P.roles[v] == TensorRole::kColumn && e_.ranks > 1 && full_input_gradient_bytes > 0) {
      // Megatron's f: the gradient of a column-parallel op's replicated input is a partial
      // sum on every rank, all-reduced in backward.
      const std::optional<TaskId> gathered = regather_sequence_input(m, s, v, tokens);
      if (gathered) {
        for (auto& cell : cells) cell.push_back(*gathered);
        // The input gradient's reduce-scatter runs beside the weight-gradient GEMM, after the
        // re-gather: Megatron-Core issues it asynchronously once the data-gradient GEMM is done
        // and waits for it after the weight gradient (LinearWithGradAccumulationAndAsyncCommunication
        // .backward, `_reduce_scatter_base(..., async_op=True)`, at 23.04 and core_r0.8.0; TE's
        // LayerNormLinear likewise, and its userbuffers' "bulk" method, UbufCommOverlap::bulk_overlap).
        // Here it may start with the op's backward (one task holds both GEMMs), after the
        // re-gather: short of the code by at most the data-gradient GEMM where the reduce-scatter
        // outlasts the weight gradient. docs/tensor-parallel.md, "Sequence parallelism".
        const std::string& name = op.name;
        std::vector<TaskId> scatter_after = deps_of(backward_task_[m][v]);
        scatter_after.push_back(*gathered);
        const TaskId scattered =
            e_.collective(prefix + "sp-reducescatter/grad/" + name + suffix_, e_.layout.tensor_group(d_, s),
                          full_input_gradient_bytes, std::move(scatter_after), step_, name,
                          CollectiveKind::kReduceScatter);
        for (auto& cell : cells) cell.push_back(scattered);
        if (overlaps_tensor_collectives()) {
          overlapped_backward_[m][v] = scattered;  // the row op before it gathers (overlapped_gather)
        } else {
          // The all-gather back (the row-parallel output's gradient, Megatron's g) after both.
          std::vector<TaskId> gather_after = backward_task_[m][v];
          gather_after.push_back(scattered);
          const TaskId regathered =
              e_.collective(prefix + "sp-allgather/grad/" + name + suffix_, e_.layout.tensor_group(d_, s),
                            gather_bytes_after(v, /*downstream=*/false, full_input_gradient_bytes),
                            std::move(gather_after), step_, name,
                            CollectiveKind::kAllGather);
          for (auto& cell : cells) cell.push_back(regathered);
          backward_ready_[m][v].assign(e_.ranks, regathered);
        }
      } else {
        const TaskId reduced =
            tensor_reduction(prefix, "grad/", s, v, full_input_gradient_bytes, backward_task_[m][v], &cells);
        backward_ready_[m][v].assign(e_.ranks, reduced);
      }
    }
    if (experts) feed_expert_exchange(m, s, v, /*forward=*/false, backward_ready_[m][v], &cells);
  }
  return cells;
}

}  // namespace placesim
