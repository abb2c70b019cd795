#include "sim/planner/parallel_3d_builder.h"

#include <cstdio>
#include <set>

#include "sim/spec/spec_error.h"
#include "sim/core/units_format.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/parallel_3d_emission.h"
#include "sim/planner/parallel_3d_gradient_emitter.h"
#include "sim/planner/parallel_3d_layout.h"
#include "sim/planner/parallel_3d_partition.h"
#include "sim/planner/parallel_3d_slot_emitter.h"
#include "sim/planner/parallel_3d_symmetry.h"
#include "sim/planner/pipeline_builder.h"
#include "sim/planner/plan_builder.h"
#include "sim/planner/step_emitter.h"

namespace placesim {
namespace {

/// The marker task closing one slot of a stage on one rank's device (`rank`: rank_name).
std::string slot_marker(const std::string& replica_prefix, int64_t m, bool forward, int64_t s, const std::string& rank) {
  return replica_prefix + "mb" + std::to_string(m) + (forward ? "/fwd-done/" : "/bwd-done/") + "stage" +
         std::to_string(s) + rank;
}

/// The tasks of `cell` that no other task of it depends on: the next slot waits for these only,
/// so that the ordering keeps no buffer alive longer than its data needs it.
std::vector<TaskId> cell_sinks(const ExecutionPlan& plan, const std::vector<TaskId>& cell) {
  std::set<TaskId> awaited;
  for (TaskId id : cell) awaited.insert(plan.tasks[id].deps.begin(), plan.tasks[id].deps.end());
  std::vector<TaskId> sinks;
  for (TaskId id : cell) {
    if (!awaited.count(id)) sinks.push_back(id);
  }
  return sinks;
}

/// Every device's static memory (ZeRO-sharded) and the notes that describe the split.
void account_static_memory(const Parallel3dEmission& e, ExecutionPlan* plan, std::vector<std::string>* notes) {
  const Parallel3dPartition& P = e.partition;
  const ParallelismOptions& options = e.options;
  if (e.shards > 1 && notes) {
    notes->push_back("ZeRO stage " + std::to_string(options.zero_stage) + " over shard groups of " +
                     std::to_string(e.shards) + " replicas" +
                     (e.shards < e.replicas ? " (hybrid: shards all-reduced across " +
                                                  std::to_string(e.replicas / e.shards) + " groups)"
                                            : std::string()));
  }
  std::vector<double> stage_flops(e.stages, 0);
  std::vector<size_t> stage_ops(e.stages, 0);
  for (OpId v : e.emitter.order()) {
    if (!e.emitter.selected(v)) continue;
    const int64_t s = static_cast<int64_t>(P.stage_of[v]);
    // ZeRO (Rajbhandari et al. 2020, figure 1): stage 1 divides the optimizer state over the
    // shard group, stage 2 also the gradients, stage 3 also the parameters.
    // An expert's shards divide over the replicas holding it (expert_data_group), 1/expert of them.
    const double shards = P.expert_op(v) && options.zero_stage >= 1
                              ? static_cast<double>(e.replicas / P.expert_ranks)
                              : static_cast<double>(e.shards);
    StaticMemory memory = op_static_memory(P.holder(v, e.graph), e.run);
    if (options.zero_stage >= 1) memory.optimizer_state_bytes /= shards;
    if (options.zero_stage >= 2) memory.gradient_bytes /= shards;
    if (options.zero_stage >= 3) memory.parameter_bytes /= shards;
    for (int64_t d = 0; d < e.replicas; ++d) {
      if (!P.runs(v, d)) continue;  // another expert rank's expert
      for (int64_t r = 0; r < e.ranks; ++r) add_static_memory(&plan->static_memory[e.device(d, s, r)], memory);
    }
    stage_flops[s] += P.shard[v].forward_flops + P.shard[v].backward_flops;
    ++stage_ops[s];
  }
  if (!notes) return;
  char sizes[200];
  const std::string context =
      options.context > 1 ? " x context " + std::to_string(options.context) : std::string();
  std::snprintf(sizes, sizeof(sizes), "data %lld x pipeline %lld%s x tensor %lld = %zu devices, %lld micro-batches of %g samples",
                static_cast<long long>(options.data), static_cast<long long>(e.stages), context.c_str(),
                static_cast<long long>(e.ranks), options.devices.size(), static_cast<long long>(e.micro_batches),
                static_cast<double>(e.run.batch_size) * e.scale);
  notes->push_back(std::string(sizes) + "; " + std::to_string(P.split_ops) + " ops split over each tensor group" +
                   (e.chunks > 1 ? "; interleaved 1F1B, " + std::to_string(e.chunks) + " virtual stages per device (" +
                                       std::to_string(e.model_chunks) + " model chunks, chunk c on stage c mod " +
                                       std::to_string(e.stages) + ")"
                                 : std::string()));
  std::string stage_text = "pipeline stages (per rank):";
  for (int64_t s = 0; s < e.stages; ++s) {
    std::string held;  // interleaved: the stage's model chunks
    for (int64_t c = s; e.chunks > 1 && c < e.model_chunks; c += e.stages) held += (c == s ? " chunks " : "+") + std::to_string(c);
    stage_text += (s ? "," : "") + std::string(" stage ") + std::to_string(s) + held + " " +
                  std::to_string(stage_ops[s]) + " ops " + format_gigaflops(stage_flops[s]);
  }
  notes->push_back(e.layout.tensor_groups_note(e.cluster));
  notes->push_back(stage_text);
  if (options.context > 1) {
    size_t attentions = 0;
    for (double bytes : P.gathered_key_values) attentions += bytes > 0;
    notes->push_back("context parallelism: each sequence split over " + std::to_string(options.context) +
                     " ranks (2 chunks each, causal load balance); K and V all-gathered before each of " +
                     std::to_string(attentions) + " attentions, their gradients reduce-scattered after");
    notes->push_back(e.layout.context_groups_note(e.cluster));
  }
  if (P.expert_ranks > 1) {
    const size_t experts = P.experts.layers.front().dispatches.size();
    notes->push_back("expert parallelism: the experts of each of " + std::to_string(P.experts.layers.size()) +
                     " mixture-of-experts layers spread over groups of " + std::to_string(P.expert_ranks) +
                     " data-parallel replicas (" + std::to_string(experts / static_cast<size_t>(P.expert_ranks)) +
                     " of " + std::to_string(experts) +
                     " experts each); tokens routed by all-to-all before the experts and back after, "
                     "each expert's gradients reduced over the " +
                     std::to_string(e.replicas / P.expert_ranks) + " replicas holding it");
    notes->push_back(e.layout.expert_groups_note(e.cluster));
  }
  if (e.replicas > 1) notes->push_back(e.layout.data_groups_note(e.cluster));
}

/// The builder behind both entry points. With `cell_index`, it emits a cell plan
/// (parallel_3d_builder.h): one micro-batch of one step, representatives only, no network
/// description, and records each stage's slot markers.
ExecutionPlan build_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                         const ParallelismOptions& options, const std::string& name, std::vector<std::string>* notes,
                         PipelineCells* cell_index) {
  if (options.micro_batches > run.batch_size) {
    throw SpecError::strategy("parallelism/micro_batches",
                     "a batch of " + std::to_string(run.batch_size) + " samples cannot be split into " +
                         std::to_string(options.micro_batches) + " micro-batches (at most run.batch_size)");
  }
  const bool cells = cell_index != nullptr;
  if (run.symmetry && !cells && options.expert > 1) {
    throw SpecError::run("simulation/symmetry",
                         "symmetry simulates each collective as one hop of a ring, but expert parallelism's "
                         "all-to-alls send to every rank of the group at once; set \"symmetry\": \"off\" or use "
                         "the analytical or closed-form tier");
  }
  if (run.symmetry || cells) require_symmetric_devices(cluster, run, options, symmetric_mode(cells));
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size * options.data);
  StepEmitter emitter(graph, cluster, run, &plan);
  const Parallel3dLayout layout(options);
  const Parallel3dPartition partition = partition_parallel_3d(graph, run, options, emitter, layout, notes);
  Parallel3dEmission e(graph, cluster, run, options, emitter, layout, partition, cells);
  account_static_memory(e, &plan, notes);

  std::vector<std::vector<PipelineSlot>> schedule(e.stages);
  for (int64_t s = 0; s < e.stages; ++s) {
    schedule[s] = e.chunks > 1 ? interleaved_schedule(static_cast<size_t>(e.stages), static_cast<size_t>(s), e.chunks,
                                                      e.micro_batches, emitter.training())
                               : pipeline_schedule(options.schedule, static_cast<size_t>(e.stages),
                                                   static_cast<size_t>(s), e.micro_batches, emitter.training());
  }
  if (cell_index) {
    cell_index->forward_done.assign(e.model_chunks, PipelineCells::kNone);
    cell_index->backward_done.assign(e.model_chunks, PipelineCells::kNone);
    cell_index->first_update_task = PipelineCells::kNone;
  }
  const int64_t steps = cells ? 1 : run.steps;
  for (int64_t step = 0; step < steps; ++step) {
    // last_backward[d][v][r]: the last micro-batch's backward (the gradient is complete).
    LastBackward last_backward(e.simulated_replicas, std::vector<std::vector<TaskId>>(graph.size()));
    GatheredParameters gathered;
    for (int64_t d = 0; d < e.simulated_replicas; ++d) {
      Parallel3dSlotEmitter slots(&e, step, d, &gathered);
      for (const auto& [stage, slot] : emission_order(schedule, e.micro_batches, e.chunks)) {
        const int64_t s = int64_t(stage);
        const int64_t c = slot.chunk * e.stages + s;
        const int64_t m = slot.micro_batch;
        std::vector<std::vector<TaskId>> slot_tasks = slot.forward ? slots.forward(m, c) : slots.backward(m, c);
        for (int64_t r = 0; r < e.simulated_ranks; ++r) {
          if (slot_tasks[r].empty()) continue;
          Task done;
          done.name = slot_marker(slots.replica_prefix(), m, slot.forward, s, e.rank_name(r)) +
                      (e.chunks > 1 ? "/chunk" + std::to_string(c) : std::string()) + StepEmitter::suffix(step);
          done.phase = slot.forward ? Phase::kForward : Phase::kBackward;
          done.step = step;
          done.device = e.device(d, s, r);
          done.op_kind = OpKind::kNoOp;
          done.replica = slots.replica_field();
          done.deps = cell_sinks(plan, slot_tasks[r]);
          const TaskId marker = emitter.add(std::move(done));
          e.previous_slot_ends[d][s][r] = {marker};
          if (cell_index && r == 0) (slot.forward ? cell_index->forward_done : cell_index->backward_done)[c] = marker;
        }
      }
      const RankTasks& backward_task = slots.backward_tasks();
      for (OpId v = 0; v < graph.size(); ++v) {
        if (!backward_task[e.micro_batches - 1][v].empty()) last_backward[d][v] = backward_task[e.micro_batches - 1][v];
      }
      // Interleaved: a stage reduces and updates its gradients once its whole schedule is done
      // (Megatron-LM without --overlap-grad-reduce), as its chunks finish at different times.
      for (OpId v = 0; e.chunks > 1 && v < graph.size(); ++v) {
        for (size_t r = 0; r < last_backward[d][v].size(); ++r) {
          last_backward[d][v][r] = e.previous_slot_ends[d][static_cast<int64_t>(partition.stage_of[v])][r].front();
        }
      }
    }
    if (!emitter.training()) continue;
    if (cell_index) cell_index->first_update_task = plan.tasks.size();
    emit_gradient_updates(&e, step, last_backward);
  }
  if (e.symmetric && !cell_index) describe_symmetry(cluster, options, partition.tied_stages, &plan, notes);
  return plan;
}

}  // namespace

ExecutionPlan build_parallel_3d_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                     const ParallelismOptions& options, const std::string& name,
                                     std::vector<std::string>* notes) {
  return build_plan(graph, cluster, run, options, name, notes, nullptr);
}

ExecutionPlan build_parallel_3d_cell_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                          const ParallelismOptions& options, PipelineCells* cells) {
  return build_plan(graph, cluster, run, options, "cells", nullptr, cells);
}

}  // namespace placesim
