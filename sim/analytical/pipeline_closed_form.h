// The closed-form tier for 3D-parallel steps: the analytical tier's step time (analytical_engine.h)
// without building the step's plan. Without contention, every micro-batch's forward (backward)
// slot on a stage takes the same time wherever it starts, and so does every transfer between
// stages; so the analytical estimate of one micro-batch's cell plan (parallel_3d_builder.h) gives
// each stage's slot durations, the delays between stages and what follows the last slot
// (data-parallel all-reduces, updates), and the step follows by a recurrence over all slots in
// emission order: O(stages x micro-batches) instead of a plan of O(stages x micro-batches x ops).
// With interleaved 1F1B (virtual stages) the same holds per model chunk: each chunk's slots are
// modelled, and a stage's slots run its chunks in the interleaved order. Exact to rounding,
// except under a framework whose NCCL kernels take a share of the GPUs they overlap
// (ParallelismOptions::communication): in the step one micro-batch's collectives may then slow
// another's compute, which one micro-batch's cell cannot see (0.03% on the test layout).
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"
#include "sim/timeline/buffer_memory.h"

namespace placesim {

struct ClosedFormStepEstimate {
  double step_seconds = 0;                 ///< one step, from the first slot to the last update
  /// By stage: one micro-batch's forward slot (interleaved: the sum of its chunks' slots).
  std::vector<double> forward_slot_seconds;
  std::vector<double> backward_slot_seconds;  ///< by stage: the same for backward (0 in inference)
  std::vector<double> stage_end_seconds;      ///< by stage: when its last task (update) ends
  size_t cell_plan_tasks = 0;              ///< tasks of the one-micro-batch plan it estimated
  /// By stage, on its representative device (replica 0, tensor rank 0; the others hold the
  /// same): the memory at its peak. Activations: the cell plan's peak of live buffers plus, for
  /// each other micro-batch the schedule keeps in flight there, what one keeps from its forward
  /// slot to its backward slot. Interleaved: the most over the stage's slots of that slot's peak
  /// in the cell plan, plus what the other micro-batch chunks open beside it keep (each chunk
  /// its own amount), plus the inputs that have begun to arrive for its later slots.
  std::vector<MemoryBreakdown> stage_peak_memory;
  /// Most forward slots not yet backward (1 in inference): micro-batches, or with interleaving
  /// micro-batch chunks (each 1/V of the stage's layers).
  std::vector<int64_t> stage_micro_batches_in_flight;
  std::vector<double> stage_memory_capacity_bytes;
};

/// One step of `options` (tensor x pipeline x data, its schedule and micro-batches) on `cluster`.
/// Needs what the cell plan needs (identical devices, no jitter): throws
/// SpecError otherwise, like build_parallel_3d_cell_plan.
ClosedFormStepEstimate estimate_3d_step_closed_form(const OpGraph& graph, const Cluster& cluster,
                                                    const RunOptions& run, const ParallelismOptions& options);

}  // namespace placesim
