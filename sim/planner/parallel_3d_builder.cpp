#include "sim/planner/parallel_3d_builder.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sim/spec/parallelism_sizes.h"
#include "sim/spec/spec_error.h"
#include "sim/core/units_format.h"
#include "sim/planner/lockstep_devices.h"
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
  std::vector<TaskId> awaited;  // sorted, for lookups
  for (TaskId id : cell) awaited.insert(awaited.end(), plan.tasks[id].deps.begin(), plan.tasks[id].deps.end());
  std::sort(awaited.begin(), awaited.end());
  std::vector<TaskId> sinks;
  for (TaskId id : cell) {
    if (!std::binary_search(awaited.begin(), awaited.end(), id)) sinks.push_back(id);
  }
  return sinks;
}

/// PipeDream: the weight versions stage s stashes (one per micro-batch in flight on it).
int64_t stashed_versions(const Parallel3dEmission& e, int64_t s) {
  return pipedream_weight_versions(e.stages, s, e.micro_batches, e.options.double_buffered, e.options.stage_replicas);
}

/// Every device's static memory (ZeRO-sharded) and the notes that describe the split; with
/// `cell_index`, also each stage's representative's share held by experts.
void account_static_memory(const Parallel3dEmission& e, ExecutionPlan* plan, std::vector<std::string>* notes,
                           PipelineCells* cell_index) {
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
  if (cell_index) cell_index->expert_static_memory.assign(static_cast<size_t>(e.stages), StaticMemory{});
  for (OpId v : e.emitter.order()) {
    if (!e.emitter.selected(v)) continue;
    const int64_t s = static_cast<int64_t>(P.stage_of[v]);
    // ZeRO (Rajbhandari et al. 2020, figure 1): stage 1 divides the optimizer state over the
    // shard group, stage 2 also the gradients, stage 3 also the parameters.
    // An expert's shards divide over the replicas holding it (expert_data_group, 1/expert of
    // them) inside one shard group (expert_shard_group).
    const double shards = P.expert_op(v) && options.zero_stage >= 1 ? static_cast<double>(P.expert_shards)
                                                                    : static_cast<double>(e.shards);
    StaticMemory memory = op_static_memory(P.holder(v, e.graph), e.run);
    // PipeDream's weight stashing: stage s keeps a version per micro-batch in flight on it, the
    // newest being the weights themselves.
    if (e.asynchronous) memory.parameter_bytes *= static_cast<double>(stashed_versions(e, s));
    if (options.zero_stage >= 1) memory.optimizer_state_bytes /= shards;
    if (options.zero_stage >= 2) memory.gradient_bytes /= shards;
    if (options.zero_stage >= 3) memory.parameter_bytes /= shards;
    for (int64_t d = 0; d < options.stage_width(s); ++d) {  // each stage replica once
      if (!P.runs(v, d)) continue;  // another expert rank's expert
      for (int64_t r = 0; r < e.ranks; ++r) add_static_memory(&plan->static_memory[e.device(d, s, r)], memory);
    }
    if (cell_index && P.expert_op(v) && P.runs(v, 0)) {
      add_static_memory(&cell_index->expert_static_memory[static_cast<size_t>(s)], memory);
    }
    stage_flops[s] += P.shard[v].forward_flops + P.shard[v].backward_flops;
    ++stage_ops[s];
  }
  if (!notes) return;
  char sizes[200];
  std::snprintf(sizes, sizeof(sizes), " = %zu devices, %lld micro-batches of %g samples", options.devices.size(),
                static_cast<long long>(e.micro_batches), static_cast<double>(e.run.batch_size) * e.scale);
  notes->push_back(parallelism_sizes_text(options) + sizes + "; " + std::to_string(P.split_ops) + " ops split over each tensor group" +
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
                     std::to_string(e.replicas / P.expert_ranks) + " replicas holding it" +
                     (e.shards < e.replicas && options.zero_stage >= 1
                          ? P.expert_shards > 1 ? " (hybrid: its shards over the " + std::to_string(P.expert_shards) +
                                                      " of them in each shard group, all-reduced across the groups)"
                                                : std::string(" (hybrid: one of them in each shard group, so whole)")
                          : std::string()));
    notes->push_back(e.layout.expert_groups_note(e.cluster));
  }
  if (e.asynchronous) {
    std::string staleness, versions;
    for (int64_t s = 0; s < e.stages; ++s) {
      const int64_t stashed = stashed_versions(e, s);
      staleness += (s ? ", " : "") + std::to_string(stashed - 1);
      versions += (s ? ", " : "") + std::to_string(stashed);
    }
    const std::string updates =
        options.double_buffered
            ? "each stage's gradients accumulated over a step's " + std::to_string(options.micro_batches) +
                  " micro-batches, then reduced and its weights updated once (PipeDream-2BW, double-buffered weights)"
            : std::string("each stage updated after every micro-batch");
    if (!options.stage_replicas.empty()) {
      notes->push_back("PipeDream's replicated stages (" + parallelism_sizes_text(options) + "): the " +
                       std::to_string(e.replicas) +
                       " streams of micro-batches round robin over each stage's replicas; each round's gradients "
                       "all-reduced across a stage's replicas before their updates");
    }
    notes->push_back((options.double_buffered ? "PipeDream-2BW: " : "PipeDream: ") + std::to_string(e.micro_batches) +
                     " micro-batches (" + std::to_string(options.micro_batches) + " x " + std::to_string(e.run.steps) +
                     " steps) in one 1F1B schedule without flushes, " + updates +
                     "; weight versions stashed per stage: " + versions +
                     "; gradient staleness per stage (updates between a micro-batch's forward and its update): " +
                     staleness);
  }
  if (e.replicas > 1) notes->push_back(e.layout.data_groups_note(e.cluster));
}

/// Where a slot runs: replica d's forward (or backward) of micro-batch m through model chunk c
/// on stage s, in step `step`.
struct SlotPlace {
  int64_t d = 0, s = 0, c = 0, m = 0;
  bool forward = true;
  int64_t step = 0;
};

/// Closes the slot that replica d's `slots` just emitted: one marker per rank after the slot's
/// sinks, the stage's next slot waiting for it; a cell plan records rank 0's.
void close_slot(Parallel3dEmission* emission, const ExecutionPlan* plan, PipelineCells* cell_index,
                const Parallel3dSlotEmitter& slots, const SlotPlace& at, const std::vector<std::vector<TaskId>>& slot_tasks) {
  Parallel3dEmission& e = *emission;
  for (int64_t r = 0; r < e.simulated_ranks; ++r) {
    if (slot_tasks[r].empty()) continue;
    Task done;
    done.name = slot_marker(slots.replica_prefix(), at.m, at.forward, at.s, e.rank_name(r)) +
                (e.chunks > 1 ? "/chunk" + std::to_string(at.c) : std::string()) + StepEmitter::suffix(at.step);
    done.phase = at.forward ? Phase::kForward : Phase::kBackward;
    done.step = at.step;
    done.device = e.device(at.d, at.s, r);
    done.op_kind = OpKind::kNoOp;
    done.replica = slots.replica_field();
    done.deps = cell_sinks(*plan, slot_tasks[r]);
    done.reads_dep_outputs = false;  // it only orders the stage's next slot
    const TaskId marker = e.emitter.add(std::move(done));
    e.previous_slot_ends[e.holder(at.d, at.s)][at.s][r] = {marker};
    if (cell_index && r == 0) (at.forward ? cell_index->forward_done : cell_index->backward_done)[at.c] = marker;
  }
}

/// PipeDream (Narayanan et al. SOSP 2019, section 3): the run's micro-batches as one 1F1B
/// schedule without flushes, slot by slot across the replicas; after each backward slot the
/// stage's gradients of that micro-batch are reduced across the replicas and its weights updated,
/// and the stage's next forwards read the new weights (Parallel3dSlotEmitter waits for the last
/// update); a backward reads the version its forward stashed, so waits for no update.
/// PipeDream-2BW (Narayanan et al. ICML 2021, section 3.1): the same schedule, but a stage
/// reduces and updates only after the backward of each step's last micro-batch, its gradients
/// accumulated over the step's micro-batches.
void emit_asynchronous_schedule(Parallel3dEmission* emission, const ExecutionPlan* plan,
                                const std::vector<std::vector<PipelineSlot>>& schedule) {
  Parallel3dEmission& e = *emission;
  GatheredParameters gathered;  // no ZeRO under PipeDream: stays empty
  std::vector<Parallel3dSlotEmitter> slots;
  slots.reserve(static_cast<size_t>(e.simulated_replicas));
  for (int64_t d = 0; d < e.simulated_replicas; ++d) slots.emplace_back(&e, 0, d, &gathered);
  for (const auto& [stage, slot] : emission_order(schedule, e.micro_batches, 1)) {
    const int64_t s = static_cast<int64_t>(stage), m = slot.micro_batch;
    for (int64_t d = 0; d < e.simulated_replicas; ++d) {
      auto& replica = slots[static_cast<size_t>(d)];
      close_slot(&e, plan, nullptr, replica, {d, s, s, m, slot.forward, 0},
                 slot.forward ? replica.forward(m, s) : replica.backward(m, s));
    }
    if (slot.forward || !e.emitter.training()) continue;
    const int64_t accumulated = e.options.double_buffered ? e.options.micro_batches : 1;
    if ((m + 1) % accumulated != 0) continue;
    LastBackward micro_batch(e.simulated_replicas, std::vector<std::vector<TaskId>>(e.graph.size()));
    for (int64_t d = 0; d < e.simulated_replicas; ++d) {
      micro_batch[static_cast<size_t>(d)] = slots[static_cast<size_t>(d)].backward_tasks()[static_cast<size_t>(m)];
    }
    emit_gradient_updates(&e, 0, micro_batch,
                          {s, accumulated > 1 ? "/step" + std::to_string(m / accumulated) : "/mb" + std::to_string(m), {}});
  }
}

/// PipeDream's replicated stages (ParallelismOptions::stage_replicas; SOSP 2019, sections 3.1-3.2):
/// the `data` streams of micro-batches go round robin over each stage's replicas, so a replica of
/// stage s runs data / w_s streams' micro-batches in turn, one round (one micro-batch of each
/// stream it serves, in stream order) after another, as one 1F1B schedule of its own depth
/// (pipedream_replicated_weight_versions). A stage's replicas run the same rounds side by side:
/// after each backward round the round's gradients are all-reduced across them and each updates
/// its weights. Stages are emitted each in its own order, a slot once the slots it reads from
/// (the same stream's micro-batch on the neighbouring stage) are.
void emit_replicated_stages(Parallel3dEmission* emission, const ExecutionPlan* plan) {
  Parallel3dEmission& e = *emission;
  const ParallelismOptions& options = e.options;
  const int64_t streams = e.replicas, per_stream = e.micro_batches;
  GatheredParameters gathered;  // no ZeRO under PipeDream: stays empty
  std::vector<Parallel3dSlotEmitter> slots;
  slots.reserve(static_cast<size_t>(streams));
  for (int64_t d = 0; d < streams; ++d) slots.emplace_back(&e, 0, d, &gathered);
  std::vector<std::vector<PipelineSlot>> order(static_cast<size_t>(e.stages));
  for (int64_t s = 0; s < e.stages; ++s) {
    const int64_t rounds = streams / options.stage_width(s) * per_stream;
    const int64_t depth = pipedream_replicated_weight_versions(options.stage_replicas, s, per_stream);
    order[static_cast<size_t>(s)] = pipeline_schedule(PipelineSchedule::kOneFOneB, static_cast<size_t>(depth), 0, rounds,
                                                      e.emitter.training());
  }
  // done[forward][s][stream x per_stream + micro-batch]: emitted.
  std::vector<std::vector<std::vector<char>>> done(
      2, std::vector<std::vector<char>>(static_cast<size_t>(e.stages), std::vector<char>(static_cast<size_t>(streams * per_stream), 0)));
  auto emitted = [&](bool forward, int64_t s, int64_t d, int64_t m) {
    return done[forward][static_cast<size_t>(s)][static_cast<size_t>(d * per_stream + m)] != 0;
  };
  std::vector<size_t> next(static_cast<size_t>(e.stages), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < e.stages; ++s) {
      const int64_t width = options.stage_width(s), per_round = streams / width;
      const std::vector<PipelineSlot>& stage_order = order[static_cast<size_t>(s)];
      for (size_t& i = next[static_cast<size_t>(s)]; i < stage_order.size(); ++i) {
        const PipelineSlot& slot = stage_order[i];
        const int64_t m = slot.micro_batch / per_round, first = slot.micro_batch % per_round * width;
        std::vector<int64_t> round;  // its streams, one per stage replica
        for (int64_t j = 0; j < width; ++j) round.push_back(first + j);
        const bool inputs_there = std::all_of(round.begin(), round.end(), [&](int64_t d) {
          return slot.forward ? s == 0 || emitted(true, s - 1, d, m) : s == e.stages - 1 || emitted(false, s + 1, d, m);
        });
        if (!inputs_there) break;
        for (int64_t d : round) {
          auto& stream = slots[static_cast<size_t>(d)];
          close_slot(&e, plan, nullptr, stream, {d, s, s, m, slot.forward, 0},
                     slot.forward ? stream.forward(m, s) : stream.backward(m, s));
          done[slot.forward][static_cast<size_t>(s)][static_cast<size_t>(d * per_stream + m)] = 1;
        }
        progress = true;
        if (slot.forward || !e.emitter.training()) continue;
        LastBackward micro_batch(static_cast<size_t>(streams), std::vector<std::vector<TaskId>>(e.graph.size()));
        for (int64_t d : round) micro_batch[static_cast<size_t>(d)] = slots[static_cast<size_t>(d)].backward_tasks()[static_cast<size_t>(m)];
        const std::string tag = "/mb" + std::to_string(m) + (per_round > 1 ? "/round" + std::to_string(first / width) : "");
        emit_gradient_updates(&e, 0, micro_batch, {s, tag, round});
      }
    }
  }
  for (int64_t s = 0; s < e.stages; ++s) {
    if (next[static_cast<size_t>(s)] < order[static_cast<size_t>(s)].size()) {
      throw std::logic_error("replicated stages: stage " + std::to_string(s) + "'s schedule waits for a slot no stage emits");
    }
  }
}

/// PipeDream's conditions: a pipeline of stages, no flush to amortise a sharded or interleaved
/// step over, no tied weights (their all-reduce joins two stages' updates; checked once
/// `partition` is given), a plan of the whole schedule (not one micro-batch's cells).
void check_asynchronous(const ParallelismOptions& options, const Parallel3dPartition* partition, bool cells) {
  if (!options.asynchronous) return;
  const std::string path = "parallelism/schedule";
  const std::string what = options.double_buffered ? "PipeDream-2BW's schedule (no flush, an update per step)"
                                                    : "PipeDream's schedule (no flush, an update per micro-batch)";
  if (cells) {
    throw SpecError::strategy(path, what + " has no step of one micro-batch's cells for the closed-form tier to "
                                           "repeat: use \"tier\": \"analytical\" or \"simulated\"");
  }
  if (options.pipeline < 2) throw SpecError::strategy(path, what + " needs \"pipeline\" >= 2");
  if (options.double_buffered && options.micro_batches < options.pipeline) {
    throw SpecError::strategy(path, "PipeDream-2BW updates once per step of \"micro_batches\" and keeps two weight "
                                    "versions only when a step has at least \"pipeline\" micro-batches: " +
                                        std::to_string(options.micro_batches) + " < " + std::to_string(options.pipeline));
  }
  if (options.virtual_stages > 1) throw SpecError::strategy(path, what + " does not interleave: give \"virtual_stages\": 1");
  if (options.zero_stage > 0) {
    throw SpecError::strategy(path, what + " keeps whole weights per stage (and stashes versions of them): no ZeRO or FSDP");
  }
  if (partition && !partition->ties.empty()) {
    throw SpecError::strategy(path, what + " updates each stage on its own; tied weights on two stages are not "
                                           "modelled with it: leave \"tied_embeddings\" off");
  }
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
  check_asynchronous(options, nullptr, cells);  // before the partition's own checks; tied weights after it
  if (!options.stage_replicas.empty() && run.symmetry) {
    throw SpecError::strategy("parallelism/stage_replicas",
                              "stages of their own widths have no representative replica to simulate for all: "
                              "leave \"simulation\": {\"symmetry\"} off");
  }
  if (run.symmetry || cells) require_symmetric_devices(cluster, run, options, symmetric_mode(cells));
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size * options.data);
  // A cell plan holds 2.8-4.4 tasks per op on the bundled GPT-3 search (one micro-batch, one
  // replica, one tensor rank): room for them up front, so that the tasks are not moved as the
  // vector grows (a tenth of a screen's time was those moves; docs/performance.md).
  if (cells) plan.tasks.reserve(5 * graph.size());
  // Tensor groups, stages and replicas wait for one another: the step runs at its slowest GPU's pace.
  set_lockstep_devices(cluster, options.devices, run, &plan);
  StepEmitter emitter(graph, cluster, run, &plan);
  const Parallel3dLayout layout(options);
  const Parallel3dPartition partition = partition_parallel_3d(graph, run, options, emitter, layout, notes);
  check_asynchronous(options, &partition, cells);
  Parallel3dEmission e(graph, cluster, run, options, emitter, layout, partition, cells);
  account_static_memory(e, &plan, notes, cell_index);

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
  if (e.asynchronous) {
    if (options.stage_replicas.empty()) {
      emit_asynchronous_schedule(&e, &plan, schedule);
    } else {
      emit_replicated_stages(&e, &plan);
    }
    if (e.symmetric) describe_symmetry(cluster, options, partition.tied_stages, &plan, notes);
    return plan;
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
        close_slot(&e, &plan, cell_index, slots, {d, s, c, m, slot.forward, step},
                   slot.forward ? slots.forward(m, c) : slots.backward(m, c));
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
