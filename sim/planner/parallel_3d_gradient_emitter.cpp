#include "sim/planner/parallel_3d_gradient_emitter.h"

#include <map>
#include <tuple>

#include "sim/planner/plan_builder.h"

namespace placesim {

void emit_gradient_updates(Parallel3dEmission* emission, int64_t step, const LastBackward& last_backward) {
  Parallel3dEmission& e = *emission;
  const Parallel3dPartition& P = e.partition;
  const std::string suffix = StepEmitter::suffix(step);
  // Gradients: accumulated over the micro-batches, all-reduced across replicas per (stage,
  // rank) in buckets in the order backward completes them, then one update per shard.
  std::map<std::tuple<int64_t, OpId, int64_t>, TaskId> reduced_tied;  // by (replica, op, rank)
  for (int64_t s = 0; s < e.stages; ++s) {
    for (int64_t r = 0; r < e.simulated_ranks; ++r) {
      std::vector<std::vector<OpId>> buckets;
      double bucket_bytes = 0;
      const auto& order = e.emitter.order();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        OpId v = *it;
        if (static_cast<int64_t>(P.stage_of[v]) != s || P.held_bytes(v) <= 0 || last_backward[0][v].empty()) {
          continue;
        }
        if (buckets.empty() || bucket_bytes >= e.options.bucket_bytes) {
          buckets.emplace_back();
          bucket_bytes = 0;
        }
        buckets.back().push_back(v);
        bucket_bytes += P.held_bytes(v);
      }
      for (size_t b = 0; b < buckets.size(); ++b) {
        std::vector<TaskId> gradient_ready;
        for (int64_t d = 0; d < e.simulated_replicas; ++d) {
          for (OpId v : buckets[b]) gradient_ready.push_back(last_backward[d][v][r]);
        }
        // Per replica: what its updates of the bucket wait for.
        std::vector<TaskId> reduced_for(static_cast<size_t>(e.simulated_replicas));
        if (e.replicas > 1) {
          const std::vector<DeviceId> group = e.layout.data_group(s, r);
          double bytes = 0;
          for (OpId v : buckets[b]) bytes += P.held_bytes(v);
          if (e.previous_data_collective[s][r]) gradient_ready.push_back(*e.previous_data_collective[s][r]);
          const std::string where =
              "stage" + std::to_string(s) + e.rank_name(r) + "/bucket" + std::to_string(b) + suffix;
          const std::string& op_name = e.graph.op(buckets[b].front()).name;
          if (e.options.zero_stage == 0 || e.shards == e.replicas) {
            // Plain data parallelism and ZeRO 1/2 all-reduce (ZeRO 1/2: a reduce-scatter and, after
            // the shard's update, an all-gather: the same bytes); ZeRO 3 only reduce-scatters
            // (parameters are gathered again before the next forward).
            TaskId reduced = e.options.zero_stage >= 3
                                 ? e.collective("zero3-reduce-scatter/" + where, group, bytes, gradient_ready, step, op_name,
                                              CollectiveKind::kReduceScatter)
                                 : e.collective("dp-allreduce/" + where, group, bytes, gradient_ready, step, op_name);
            e.previous_data_collective[s][r] = reduced;
            reduced_for.assign(reduced_for.size(), reduced);
          } else {
            // Hybrid sharding: reduce-scatter inside each shard group, then all-reduce each 1/shards
            // shard across the groups.
            std::vector<TaskId> scattered;
            for (int64_t k = 0; k < (e.symmetric ? 1 : e.replicas / e.shards); ++k) {
              scattered.push_back(e.collective("zero3-reduce-scatter/group" + std::to_string(k) + "/" + where,
                                             e.layout.shard_group(k * e.shards, s, r), bytes, gradient_ready, step, op_name,
                                             CollectiveKind::kReduceScatter));
            }
            std::vector<TaskId> across;
            for (int64_t j = 0; j < (e.symmetric ? 1 : e.shards); ++j) {
              across.push_back(e.collective("hybrid-allreduce/shard" + std::to_string(j) + "/" + where,
                                          e.layout.cross_group(j, s, r), bytes / static_cast<double>(e.shards), scattered, step,
                                          op_name));
            }
            e.previous_data_collective[s][r] = across.back();
            for (int64_t d = 0; d < e.simulated_replicas; ++d) reduced_for[static_cast<size_t>(d)] = across[static_cast<size_t>(d % e.shards)];
          }
        }
        for (int64_t d = 0; d < e.simulated_replicas; ++d) {
          for (OpId v : buckets[b]) {
            TaskId after = e.replicas > 1 ? reduced_for[static_cast<size_t>(d)] : last_backward[d][v][r];
            if (P.tied[v]) {  // updated after the tied all-reduce, below
              reduced_tied[{d, v, r}] = after;
              continue;
            }
            // ZeRO 1-3: each replica updates its 1/shards of the optimizer state only.
            Op updated = P.holder(v, e.graph);
            if (e.options.zero_stage >= 1) updated.parameter_count /= static_cast<double>(e.shards);
            Task update = optimizer_task(updated, e.run.optimizer, e.device(d, s, r), step, e.replicas > 1 ? d : -1, after);
            update.name += e.rank_name(r);
            e.previous_update[d][v][r] = e.emitter.add(std::move(update));
          }
        }
      }
    }
  }
  // Tied weights: the two stages' copies of the gradient summed, then both copies updated.
  for (const auto& [reader, owner] : P.ties) {
    const int64_t owner_stage = static_cast<int64_t>(P.stage_of[owner]), reader_stage = static_cast<int64_t>(P.stage_of[reader]);
    const double bytes = P.held_bytes(owner) / static_cast<double>(e.options.zero_stage >= 2 ? e.shards : 1);
    for (int64_t d = 0; d < e.simulated_replicas; ++d) {
      for (int64_t r = 0; r < e.simulated_ranks; ++r) {
        std::vector<TaskId> deps;
        for (OpId v : {owner, reader}) {
          auto it = reduced_tied.find({d, v, r});
          deps.push_back(it != reduced_tied.end() ? it->second : last_backward[d][v][r]);
        }
        const TaskId reduced = e.collective((e.replicas > 1 ? StepEmitter::prefix(d) : std::string()) + "tied-allreduce/" +
                                              e.graph.op(owner).name + e.rank_name(r) + suffix,
                                          {e.device(d, owner_stage, r), e.device(d, reader_stage, r)}, bytes, deps, step,
                                          e.graph.op(owner).name);
        for (OpId v : {owner, reader}) {
          Op updated = P.holder(v, e.graph);
          if (e.options.zero_stage >= 1) updated.parameter_count /= static_cast<double>(e.shards);
          Task update = optimizer_task(updated, e.run.optimizer, e.device(d, static_cast<int64_t>(P.stage_of[v]), r), step,
                                       e.replicas > 1 ? d : -1, reduced);
          update.name += e.rank_name(r);
          e.previous_update[d][v][r] = e.emitter.add(std::move(update));
        }
      }
    }
  }
}

}  // namespace placesim
