// Pipeline-parallel plans (docs/pipeline-parallel.md): the graph split into contiguous stages in
// topological order, one stage per device; each step's batch split into M micro-batches, each a
// copy of the step with every op's FLOPs, bytes and activations divided by M. Activations flow
// to the next stage and gradients back; gradients accumulate over the micro-batches and each op
// is updated once per step. The schedule (GPipe or 1F1B) is the order of (micro-batch, forward
// or backward) slots on every stage, enforced by ordering dependencies between consecutive slots.
#pragma once

#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// One unit of a stage's schedule: the forward or the backward of one micro-batch.
struct PipelineSlot {
  bool forward = true;
  int64_t micro_batch = 0;
  bool operator==(const PipelineSlot&) const = default;
};

/// The slots stage `stage` (0-based) of `stages` runs, in order. GPipe: F0..F(M-1), B0..B(M-1).
/// 1F1B (PipeDream-flush, Narayanan et al. 2021): min(K-s-1, M) warm-up forwards, then one
/// forward and one backward alternately, then the remaining backwards.
std::vector<PipelineSlot> pipeline_schedule(PipelineSchedule schedule, size_t stages, size_t stage,
                                            int64_t micro_batches, bool training = true);

/// A slot of one stage, in the order the builders emit them.
struct StageSlot {
  size_t stage = 0;
  PipelineSlot slot;
};

/// Every stage's slots (`schedule[s]`, as pipeline_schedule gives them) merged into one order in
/// which every dependency points back: a stage's slots in schedule order, a forward after the
/// previous stage's forward of its micro-batch, a backward after the next stage's backward of it.
/// Throws std::logic_error when the schedules deadlock.
std::vector<StageSlot> emission_order(const std::vector<std::vector<PipelineSlot>>& schedule, int64_t micro_batches);

/// The stage of every op (by OpId): by the stages' globs when given (an op no glob matches joins
/// its first consumer's stage, or its predecessor's in topological order when it has no
/// consumer); else balanced by compute: each op goes to the stage in which the midpoint of its
/// forward + backward FLOPs falls along the cumulative sum in topological order, and ops without
/// FLOPs (inputs, variables) join their first consumer's stage. Throws InputError when a data
/// edge would go from a later stage back to an earlier one, or a stage gets no op.
std::vector<size_t> assign_pipeline_stages(const OpGraph& graph, const PipelineOptions& options);

/// `notes` receives the stage split (ops and FLOPs per stage).
ExecutionPlan build_pipeline_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                  const PipelineOptions& options, const std::string& name,
                                  std::vector<std::string>* notes);

}  // namespace placesim
