#include "sim/planner/parallel_3d_gradient_emitter.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "sim/planner/memory_model.h"
#include "sim/planner/plan_builder.h"

namespace placesim {

namespace {

/// By (replica, stage, rank): the last gradient reduction of the step on those devices.
using LastReductions = std::map<std::tuple<int64_t, int64_t, int64_t>, TaskId>;

/// An update of replica d's copy (or shard) of `op` on the (stage, rank) being emitted, after
/// `after` (its bucket's reduction, or its last backward without data parallelism); its optimizer
/// state divided over `sharded_over` holders (ZeRO).
struct PendingUpdate {
  int64_t replica;
  OpId op;
  TaskId after;
  double sharded_over;
};

/// Adds replica d's update on stage s, rank r. Megatron-LM and DeepSpeed's pipeline engine step
/// the optimizer once the stage's schedule has run, so an update also waits for the stage's last
/// slot to close: it never runs between that slot's backward tasks. It also waits for `last`'s
/// reduction of (d, s, r), the last of the step there, dense or expert: `optimizer.step()` follows
/// the whole backward pass with every bucket reduced (PyTorch DDP's backward returns after its
/// last bucket; Megatron's gradient-norm clipping reads every gradient), so no update overlaps a
/// later bucket's reduction.
TaskId add_update(Parallel3dEmission* emission, Task update, int64_t d, int64_t s, int64_t r, const LastReductions& last) {
  Parallel3dEmission& e = *emission;
  for (TaskId marker : e.previous_slot_ends[e.holder(d, s)][s][r]) update.deps.push_back(marker);
  auto reduced_all = last.find({d, s, r});
  if (reduced_all != last.end() &&
      std::find(update.deps.begin(), update.deps.end(), reduced_all->second) == update.deps.end()) {
    update.deps.push_back(reduced_all->second);
  }
  return e.emitter.add(std::move(update));
}

/// Op v's gradients on one (stage, tensor rank): its shard's (or, for a tied copy, its owner's)
/// parameters at the run's gradient element size (gradient_element_bytes: fp32 under
/// run.fp32_gradients).
double gradient_bytes_of(const Parallel3dEmission& e, OpId v) {
  const Op& op = e.graph.op(v);
  return e.partition.held_bytes(v) * gradient_element_bytes(e.run, op.dtype_bytes) / op.dtype_bytes;
}

/// The bytes of one data-parallel all-reduce of a bucket whose gradients hold `gradients` bytes
/// and whose parameters `parameters`: the gradients' without ZeRO; with ZeRO 1 and 2, where it
/// stands for a reduce-scatter of the gradients and, after each shard's update, an all-gather of
/// the parameters, the mean of the two, as a ring moves (n - 1)/n of each (equal when the
/// gradients keep the parameters' type).
double all_reduce_bytes(const Parallel3dEmission& e, double gradients, double parameters) {
  return e.options.zero_stage == 1 || e.options.zero_stage == 2 ? (gradients + parameters) / 2 : gradients;
}

/// The ops with weights for which `reduced_here` holds, in buckets of e.options.bucket_bytes in
/// the order backward completes them (the reverse of the forward order), as the framework fills
/// them (joins_gradient_group: PyTorch DDP's close once full, Horovod's stay within the size).
std::vector<std::vector<OpId>> gradient_buckets(const Parallel3dEmission& e, const std::function<bool(OpId)>& reduced_here) {
  std::vector<std::vector<OpId>> buckets;
  double bucket_bytes = 0;
  const auto& order = e.emitter.order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const OpId v = *it;
    if (e.partition.held_bytes(v) <= 0 || !reduced_here(v)) continue;
    const double gradients = gradient_bytes_of(e, v);
    if (buckets.empty() || !joins_gradient_group(e.options.communication.framework, bucket_bytes, gradients,
                                                 e.options.bucket_bytes)) {
      buckets.emplace_back();
      bucket_bytes = 0;
    }
    buckets.back().push_back(v);
    bucket_bytes += gradients;
  }
  return buckets;
}

/// Expert parallelism on (stage s, rank r): each expert's gradients, accumulated over the
/// micro-batches, all-reduced over the replicas that hold it (expert_data_group) in buckets in the
/// order backward completes them, after the stage's dense buckets (ZeRO 3: reduce-scattered); one
/// update per replica (to `pending`), ZeRO dividing its optimizer state over its expert shard
/// group; each replica's last reduction to `last`. With FSDP's hybrid sharding (an expert shard
/// group smaller than its holders), as the dense gradients: reduce-scattered inside each expert
/// shard group, then each shard all-reduced across the groups (expert_cross_group); a shard group
/// holding one replica of each expert keeps it whole and all-reduces it over its holders.
void reduce_expert_gradients(Parallel3dEmission* emission, int64_t step, const LastBackward& last_backward,
                             const std::string& suffix, int64_t s, int64_t r, std::vector<PendingUpdate>* pending,
                             LastReductions* last) {
  Parallel3dEmission& e = *emission;
  const Parallel3dPartition& P = e.partition;
  // The simulated replicas of each expert rank: the first reduces for all of them.
  std::map<int64_t, std::vector<int64_t>> replicas_of_rank;
  for (int64_t d = 0; d < e.simulated_replicas; ++d) replicas_of_rank[P.expert_rank(d)].push_back(d);
  // Each expert rank's reductions follow the stage's dense ones on its own devices; the ranks'
  // groups are disjoint, so one rank's do not wait for another's.
  const std::optional<TaskId> after_dense = e.last_data_collective(s, r);
  std::optional<TaskId> last_of_first_rank;
  const int64_t shards = P.expert_shards;  // 1 without ZeRO
  for (const auto& [rank, members] : replicas_of_rank) {
    const int64_t first = members.front();
    std::optional<TaskId> previous = after_dense;
    const std::vector<std::vector<OpId>> buckets = gradient_buckets(e, [&](OpId v) {
      return P.expert_op(v) && static_cast<int64_t>(P.stage_of[v]) == s && P.runs(v, first) &&
             !last_backward[first][v].empty();
    });
    const std::vector<DeviceId> holders = e.layout.expert_data_group(first, s, r);
    const bool hybrid = shards > 1 && shards < static_cast<int64_t>(holders.size());
    const std::vector<int64_t> position = hybrid ? e.layout.expert_shard_places().position : std::vector<int64_t>();
    // By member: what its updates of a bucket wait for (the last bucket's, after the loop).
    std::map<int64_t, TaskId> reduced_for;
    for (size_t b = 0; b < buckets.size(); ++b) {
      std::vector<TaskId> ready;
      for (int64_t d : members) {
        for (OpId v : buckets[b]) ready.push_back(last_backward[d][v][r]);
      }
      double bytes = 0, parameters = 0;
      for (OpId v : buckets[b]) {
        bytes += gradient_bytes_of(e, v);
        parameters += P.held_bytes(v);
      }
      if (previous) ready.push_back(*previous);
      const std::string where = "/stage" + std::to_string(s) + e.rank_name(r) + "/experts" + std::to_string(rank) +
                                "/bucket" + std::to_string(b) + suffix;
      const std::string& op_name = e.graph.op(buckets[b].front()).name;
      reduced_for.clear();
      if (hybrid) {
        // One reduce-scatter per expert shard group of the members, then one all-reduce of each
        // 1/shards shard across the groups (as many as the members' positions in their groups).
        std::map<int64_t, TaskId> scattered_in;  // by shard group
        std::vector<TaskId> scattered;
        for (int64_t d : members) {
          const int64_t group = d / e.shards;
          if (scattered_in.count(group)) continue;
          scattered_in[group] = e.gradient_collective("ep-zero3-reduce-scatter/group" + std::to_string(group) + where,
                                                      e.layout.expert_shard_group(d, s, r), bytes, ready, step, op_name,
                                                      CollectiveKind::kReduceScatter);
          scattered.push_back(scattered_in[group]);
        }
        std::map<int64_t, TaskId> across;  // by position in the expert shard group
        for (int64_t d : members) {
          const int64_t shard = position[static_cast<size_t>(d)];
          if (!across.count(shard)) {
            across[shard] = e.gradient_collective(
                "ep-hybrid-allreduce/shard" + std::to_string(shard) + where, e.layout.expert_cross_group(d, s, r, position),
                bytes / static_cast<double>(shards), scattered, step, op_name);
            previous = across[shard];
          }
          reduced_for[d] = across[shard];
        }
      } else if (holders.size() > 1) {
        // ZeRO 3 over all the holders only reduce-scatters (the parameters are gathered again
        // before use); without ZeRO, or with one holder per shard group, an all-reduce.
        const bool scatters = e.options.zero_stage >= 3 && shards > 1;
        previous = e.gradient_collective((scatters ? "ep-zero3-reduce-scatter" : "ep-dp-allreduce") + where, holders,
                                         scatters ? bytes : all_reduce_bytes(e, bytes, parameters), ready, step, op_name,
                                         scatters ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce);
        for (int64_t d : members) reduced_for[d] = *previous;
      }
      for (int64_t d : members) {
        const auto reduced = reduced_for.find(d);
        for (OpId v : buckets[b]) {
          pending->push_back({d, v, reduced != reduced_for.end() ? reduced->second : last_backward[d][v][r],
                              static_cast<double>(shards)});
        }
      }
    }
    if (previous) {
      // Hybrid: a replica's last reduction is its own shard's all-reduce, not another device's.
      for (int64_t d : members) (*last)[{d, s, r}] = reduced_for.count(d) ? reduced_for.at(d) : *previous;
    }
    if (!last_of_first_rank) last_of_first_rank = previous;
  }
  // The next step's dense reductions follow the representative rank's (replica 0's).
  if (last_of_first_rank && last_of_first_rank != after_dense) e.data_collectives[s][r].push_back(*last_of_first_rank);
}

}  // namespace

void emit_gradient_updates(Parallel3dEmission* emission, int64_t step, const LastBackward& last_backward,
                           const GradientScope& scope) {
  Parallel3dEmission& e = *emission;
  const Parallel3dPartition& P = e.partition;
  const std::string suffix = StepEmitter::suffix(step) + scope.tag;
  // Gradients: accumulated over the micro-batches, all-reduced across replicas per (stage,
  // rank) in buckets in the order backward completes them, then one update per shard.
  std::map<std::tuple<int64_t, OpId, int64_t>, TaskId> reduced_tied;  // by (replica, op, rank)
  LastReductions last_reduction;
  std::vector<int64_t> members = scope.replicas;
  if (members.empty()) {
    for (int64_t d = 0; d < e.simulated_replicas; ++d) members.push_back(d);
  }
  // Whether the gradients cross devices: every replica's (the data-parallel group, simulated or
  // not), or the scope's replicas, each on its own stage replica.
  const bool reduces = scope.replicas.empty() ? e.replicas > 1 : scope.replicas.size() > 1;
  for (int64_t s = 0; s < e.stages; ++s) {
    if (scope.stage >= 0 && s != scope.stage) continue;
    for (int64_t r = 0; r < e.simulated_ranks; ++r) {
      const std::vector<std::vector<OpId>> buckets = gradient_buckets(e, [&](OpId v) {
        // Experts: reduce_expert_gradients.
        return static_cast<int64_t>(P.stage_of[v]) == s && !last_backward[members.front()][v].empty() &&
               !P.expert_op(v);
      });
      // Each bucket's updates wait for its reduction, and all of them for the (stage, rank)'s last
      // (add_update): they are emitted once every bucket's reduction, dense and expert, is.
      std::vector<PendingUpdate> pending;
      // ZeRO 1-3: each replica updates its 1/shards of the optimizer state only.
      const double shards = e.options.zero_stage >= 1 ? static_cast<double>(e.shards) : 1.0;
      for (size_t b = 0; b < buckets.size(); ++b) {
        std::vector<TaskId> gradient_ready;
        for (int64_t d : members) {
          for (OpId v : buckets[b]) gradient_ready.push_back(last_backward[d][v][r]);
        }
        // Per replica: what its updates of the bucket wait for.
        std::vector<TaskId> reduced_for(static_cast<size_t>(e.simulated_replicas));
        if (reduces) {
          std::vector<DeviceId> group;
          if (scope.replicas.empty()) {
            group = e.layout.data_group(s, r);
          } else {
            for (int64_t d : members) group.push_back(e.device(d, s, r));
          }
          double bytes = 0, parameters = 0;
          for (OpId v : buckets[b]) {
            bytes += gradient_bytes_of(e, v);
            parameters += P.held_bytes(v);
          }
          if (const std::optional<TaskId> wait = e.data_collective_to_wait_for(s, r)) gradient_ready.push_back(*wait);
          const std::string where =
              "stage" + std::to_string(s) + e.rank_name(r) + "/bucket" + std::to_string(b) + suffix;
          const std::string& op_name = e.graph.op(buckets[b].front()).name;
          if (e.options.zero_stage == 0 || e.shards == e.replicas) {
            // Plain data parallelism and ZeRO 1/2 all-reduce (ZeRO 1/2: a reduce-scatter and, after
            // the shard's update, an all-gather: the same bytes); ZeRO 3 only reduce-scatters
            // (parameters are gathered again before the next forward).
            TaskId reduced = e.options.zero_stage >= 3
                                 ? e.gradient_collective("zero3-reduce-scatter/" + where, group, bytes, gradient_ready,
                                                         step, op_name, CollectiveKind::kReduceScatter)
                                 : e.gradient_collective("dp-allreduce/" + where, group,
                                                         all_reduce_bytes(e, bytes, parameters), gradient_ready, step,
                                                         op_name);
            e.data_collectives[s][r].push_back(reduced);
            reduced_for.assign(reduced_for.size(), reduced);
          } else {
            // Hybrid sharding: reduce-scatter inside each shard group, then all-reduce each 1/shards
            // shard across the groups.
            std::vector<TaskId> scattered;
            for (int64_t k = 0; k < (e.symmetric ? 1 : e.replicas / e.shards); ++k) {
              scattered.push_back(e.gradient_collective("zero3-reduce-scatter/group" + std::to_string(k) + "/" + where,
                                                        e.layout.shard_group(k * e.shards, s, r), bytes, gradient_ready,
                                                        step, op_name, CollectiveKind::kReduceScatter));
            }
            std::vector<TaskId> across;
            for (int64_t j = 0; j < (e.symmetric ? 1 : e.shards); ++j) {
              across.push_back(e.gradient_collective("hybrid-allreduce/shard" + std::to_string(j) + "/" + where,
                                                     e.layout.cross_group(j, s, r), bytes / static_cast<double>(e.shards),
                                                     scattered, step, op_name));
            }
            e.data_collectives[s][r].push_back(across.back());
            for (int64_t d = 0; d < e.simulated_replicas; ++d) reduced_for[static_cast<size_t>(d)] = across[static_cast<size_t>(d % e.shards)];
          }
        }
        for (int64_t d : members) {
          if (reduces) last_reduction[{d, s, r}] = reduced_for[static_cast<size_t>(d)];
          for (OpId v : buckets[b]) {
            TaskId after = reduces ? reduced_for[static_cast<size_t>(d)] : last_backward[d][v][r];
            if (P.tied[v]) {  // updated after the tied all-reduce, below
              reduced_tied[{d, v, r}] = after;
              continue;
            }
            pending.push_back({d, v, after, shards});
          }
        }
      }
      if (P.expert_ranks > 1) reduce_expert_gradients(&e, step, last_backward, suffix, s, r, &pending, &last_reduction);
      for (const PendingUpdate& p : pending) {
        Op updated = P.holder(p.op, e.graph);
        updated.parameter_count /= p.sharded_over;
        Task update =
            optimizer_task(updated, optimizer_step(e.run, e.options.communication.framework), e.device(p.replica, s, r), step, e.replicas > 1 ? p.replica : -1, p.after);
        update.name += e.rank_name(r) + scope.tag;
        e.previous_update[e.holder(p.replica, s)][p.op][r] =
            add_update(&e, std::move(update), p.replica, s, r, last_reduction);
      }
    }
  }
  // Tied weights: the two stages' copies of the gradient summed, then both copies updated.
  for (const auto& [reader, owner] : P.ties) {
    const int64_t owner_stage = static_cast<int64_t>(P.stage_of[owner]), reader_stage = static_cast<int64_t>(P.stage_of[reader]);
    const double bytes = gradient_bytes_of(e, owner) / static_cast<double>(e.options.zero_stage >= 2 ? e.shards : 1);
    for (int64_t d = 0; d < e.simulated_replicas; ++d) {
      for (int64_t r = 0; r < e.simulated_ranks; ++r) {
        std::vector<TaskId> deps;
        for (OpId v : {owner, reader}) {
          auto it = reduced_tied.find({d, v, r});
          deps.push_back(it != reduced_tied.end() ? it->second : last_backward[d][v][r]);
        }
        const std::string replica_prefix = e.replicas > 1 ? StepEmitter::prefix(d) : std::string();
        const TaskId reduced = e.gradient_collective(
            replica_prefix + "tied-allreduce/" + e.graph.op(owner).name + e.rank_name(r) + suffix,
            {e.device(d, owner_stage, r), e.device(d, reader_stage, r)}, bytes, deps, step, e.graph.op(owner).name);
        for (OpId v : {owner, reader}) {
          Op updated = P.holder(v, e.graph);
          if (e.options.zero_stage >= 1) updated.parameter_count /= static_cast<double>(e.shards);
          Task update = optimizer_task(updated, optimizer_step(e.run, e.options.communication.framework), e.device(d, static_cast<int64_t>(P.stage_of[v]), r), step,
                                       e.replicas > 1 ? d : -1, reduced);
          update.name += e.rank_name(r);
          e.previous_update[d][v][r] =
              add_update(&e, std::move(update), d, static_cast<int64_t>(P.stage_of[v]), r, last_reduction);
        }
      }
    }
  }
}

}  // namespace placesim
