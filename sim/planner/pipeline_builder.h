// Pipeline-parallel plans (docs/pipeline-parallel.md): the graph split into contiguous stages in
// topological order, one stage per device; each step's batch split into M micro-batches, each a
// copy of the step with every op's FLOPs, bytes and activations divided by M. Activations flow
// to the next stage and gradients back; gradients accumulate over the micro-batches and each op
// is updated once per step. The schedule (GPipe, 1F1B or interleaved 1F1B) is the order of
// (micro-batch, forward or backward, model chunk) slots on every stage, enforced by ordering
// dependencies between consecutive slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// One unit of a stage's schedule: the forward or the backward of one micro-batch through one of
/// the stage's model chunks. Packed in 8 bytes: the search screen walks millions of them, and a
/// step's schedule of 24-byte slots did not stay in cache (docs/performance.md, session 38).
struct PipelineSlot {
  static constexpr int kMicroBatchBits = 47, kChunkBits = 16;
  static constexpr int64_t kMaxMicroBatches = int64_t{1} << (kMicroBatchBits - 1);
  static constexpr int64_t kMaxChunks = int64_t{1} << (kChunkBits - 1);
  PipelineSlot() = default;
  // The schedules check their ranges (kMaxMicroBatches, kMaxChunks) before they build slots.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
  PipelineSlot(bool is_forward, int64_t micro_batch_index, int64_t chunk_index = 0)
      : forward(is_forward), micro_batch(micro_batch_index), chunk(chunk_index) {}
#pragma GCC diagnostic pop

  bool forward : 1 = true;
  int64_t micro_batch : kMicroBatchBits = 0;
  /// Which of the stage's chunks (interleaved 1F1B): stage s of K runs chunk c x K + s of the
  /// model. Always 0 without interleaving.
  int64_t chunk : kChunkBits = 0;
  bool operator==(const PipelineSlot&) const = default;
};
static_assert(sizeof(PipelineSlot) == 8, "PipelineSlot packs into one word");

/// The slots stage `stage` (0-based) of `stages` runs, in order. GPipe: F0..F(M-1), B0..B(M-1).
/// 1F1B (PipeDream-flush, Narayanan et al. 2021): min(K-s-1, M) warm-up forwards, then one
/// forward and one backward alternately, then the remaining backwards.
std::vector<PipelineSlot> pipeline_schedule(PipelineSchedule schedule, size_t stages, size_t stage,
                                            int64_t micro_batches, bool training = true);

/// Interleaved 1F1B (Narayanan et al. SC'21, section 2.2.2; Megatron-LM's
/// forward_backward_pipelining_with_interleaving): the model split into K x V chunks, chunk c on
/// stage c mod K, so stage s holds V chunks (slot.chunk i is model chunk i x K + s). Forwards go
/// in groups of K micro-batches: chunk 0 of the group's micro-batches, then chunk 1, ..., chunk
/// V-1; backwards likewise from chunk V-1 down to 0. Stage s runs min((K-s-1) x 2 + (V-1) x K,
/// M x V) warm-up forwards, then one forward and one backward alternately, then the remaining
/// backwards; in inference, the forwards only. Megatron-LM asks M to be a multiple of K (the
/// scenario loader does); a last, smaller group is scheduled the same way here (the closed-form
/// tier's cell plan runs one micro-batch).
std::vector<PipelineSlot> interleaved_schedule(size_t stages, size_t stage, int64_t chunks, int64_t micro_batches,
                                               bool training = true);

/// A slot of one stage, in the order the builders emit them.
struct StageSlot {
  size_t stage = 0;
  PipelineSlot slot;
};

/// Every stage's slots (`schedule[s]`, as pipeline_schedule or interleaved_schedule give them)
/// merged into one order in which every dependency points back: a stage's slots in schedule
/// order, a forward after the previous model chunk's forward of its micro-batch, a backward after
/// the next chunk's backward of it (with `chunks` per stage, chunk c x K + s follows c x K + s - 1,
/// which for s = 0 is the last stage's chunk c - 1). Throws std::logic_error when the schedules
/// deadlock.
std::vector<StageSlot> emission_order(const std::vector<std::vector<PipelineSlot>>& schedule, int64_t micro_batches,
                                      int64_t chunks = 1);

/// emission_order's sweep without building the order: `visit(stage, slot)` for every slot, in
/// that order. `visited(forward, model_chunk, micro_batch)` says whether that slot has been
/// visited; the caller keeps that record (flags, or end times it computes as it visits), so a
/// pass over all slots builds nothing of its own. With `first` (by stage), the slots before
/// stage s's first[s] count as visited already (`visited` must say so) and are not visited
/// again. Throws std::logic_error on a deadlock.
template <typename Visited, typename Visit>
void visit_in_emission_order(const std::vector<std::vector<PipelineSlot>>& schedule, int64_t chunks,
                             Visited visited, Visit visit, const std::vector<size_t>* first = nullptr) {
  const size_t stages = schedule.size();
  const size_t model_chunks = stages * static_cast<size_t>(chunks);
  std::vector<size_t> next = first ? *first : std::vector<size_t>(stages, 0);
  size_t remaining = 0;
  for (size_t s = 0; s < stages; ++s) remaining += schedule[s].size() - next[s];
  while (remaining > 0) {
    const size_t before = remaining;
    for (size_t s = 0; s < stages; ++s) {
      for (; next[s] < schedule[s].size(); ++next[s], --remaining) {
        const PipelineSlot& slot = schedule[s][next[s]];
        const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
        const bool ready = slot.forward ? (c == 0 || visited(true, c - 1, slot.micro_batch))
                                        : (c + 1 == model_chunks || visited(false, c + 1, slot.micro_batch));
        if (!ready) break;
        visit(s, slot);
      }
    }
    if (remaining == before) throw std::logic_error("pipeline schedule deadlocks");
  }
}

/// The stage of every op (by OpId): by the stages' globs when given (an op no glob matches joins
/// its first consumer's stage, or its predecessor's in topological order when it has no
/// consumer); else balanced by compute: each op goes to the stage in which the midpoint of its
/// forward + backward FLOPs falls along the cumulative sum in topological order (stages taking
/// equal shares of it, or their `stage_weights`' shares), and ops without
/// FLOPs (inputs, variables) join their first consumer's stage. Throws SpecError ("pipeline/stages") when a data
/// edge would go from a later stage back to an earlier one, or a stage gets no op.
std::vector<size_t> assign_pipeline_stages(const OpGraph& graph, const PipelineOptions& options);

/// An op no rule has put on a stage yet.
constexpr size_t kUnassignedStage = static_cast<size_t>(-1);

/// The rest of assign_pipeline_stages for a partial split (`stage_of` by OpId, kUnassignedStage
/// where none): the unassigned ops join their first consumer's stage (or their predecessor's),
/// with the same checks of `stages` stages (SpecError at "pipeline/stages").
std::vector<size_t> complete_pipeline_stages(const OpGraph& graph, std::vector<size_t> stage_of, size_t stages);

/// `notes` receives the stage split (ops and FLOPs per stage).
ExecutionPlan build_pipeline_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                  const PipelineOptions& options, const std::string& name,
                                  std::vector<std::string>* notes);

}  // namespace placesim
