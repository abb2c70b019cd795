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

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/planner/pipeline_builder.h"
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
  /// The cell plan's ExecutionPlan::lockstep_gemm_factor and lockstep_gpus: its GEMMs at the
  /// expected slowest of its GPUs' pace.
  double lockstep_gemm_factor = 1.0;
  int64_t lockstep_gpus = 1;
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

/// A model chunk's slot (or its stage's finish) as a max-plus function of when its inputs are
/// there: it ends at the latest of (the stage's previous slot's end + alone_seconds) and, for
/// each chunk it receives from, (that chunk's matching slot's end + delay_seconds). Without
/// interleaving a chunk is a stage.
struct ClosedFormSlot {
  double alone_seconds = 0;  ///< every input already there
  /// (sending chunk, its transfer then this slot's rest), each sender once, ascending: a flat
  /// list, read once per slot of every step the cell estimates.
  std::vector<std::pair<size_t, double>> delay_seconds;
};

/// What one micro-batch's cell plan says of a layout, whatever its number of micro-batches and
/// its schedule (GPipe or 1F1B: the same one-micro-batch order): the slots, the stages' finish,
/// and what each stage's memory is made of. Numbers only; the plan is gone.
struct ClosedFormCell {
  size_t stages = 0;
  int64_t chunks = 1;  ///< model chunks per stage (virtual stages)
  bool training = true;
  bool backward_slots = false;  ///< training with backward slots
  size_t cell_plan_tasks = 0;
  double lockstep_gemm_factor = 1.0;  ///< the cell plan's (ExecutionPlan::lockstep_gemm_factor)
  int64_t lockstep_gpus = 1;
  std::vector<std::vector<PipelineSlot>> cell_schedule;  ///< by stage: one micro-batch's slots
  std::vector<ClosedFormSlot> forward, backward;  ///< by model chunk (chunk x stages + stage)
  /// By stage: its last slot with the updates that interleave with it, until its marker ends
  /// (`last`) and until the stage's last task does (`finish`).
  std::vector<ClosedFormSlot> last, finish;
  /// An input a chunk's slot receives: from which chunk, how long after that chunk's slot ends
  /// it starts to arrive, and the bytes it holds until consumed.
  struct Input {
    size_t from = 0;
    double offset_seconds = 0;
    double bytes = 0;
  };
  std::vector<std::vector<Input>> forward_inputs, backward_inputs;  ///< by model chunk
  /// By stage, on its representative device: the cell plan's peak of live buffers (the updates
  /// and gradient reductions keep none: Task::reads_dep_outputs), the workspace, the static
  /// memory and the capacity.
  std::vector<double> cell_peak_bytes, workspace_bytes, capacity_bytes;
  std::vector<MemoryBreakdown> static_memory;  ///< parameters, gradients, optimizer state
  /// By stage: the part of static_memory its experts hold (PipelineCells::expert_static_memory),
  /// divided over the cell's expert shard group where the rest divides over its ZeRO shard group.
  std::vector<MemoryBreakdown> expert_static_memory;
  /// By stage and its chunk: what a micro-batch chunk keeps from its forward slot to its backward.
  std::vector<std::vector<double>> kept_bytes;
  /// By stage, interleaved: each cell slot's (forward?, chunk) peak, how long before its end it
  /// last peaks, and the cell micro-batch's chunks open before it.
  struct SlotPeak {
    double peak_bytes = 0;
    double peak_before_end_seconds = 0;
    std::vector<int64_t> open;
  };
  std::vector<std::map<std::pair<bool, int64_t>, SlotPeak>> slot_peaks;
};

/// Builds and reads one micro-batch's cell plan of `options` (its micro_batches set the
/// micro-batch's share of the batch; its schedule only whether it interleaves). Needs what the
/// cell plan needs (identical devices, no jitter): throws SpecError otherwise, like
/// build_parallel_3d_cell_plan.
ClosedFormCell analyse_3d_cell(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                               const ParallelismOptions& options);

/// The slots a step runs: each stage's in its schedule's order (the recurrence visits them in
/// emission order, pipeline_builder.h, without building it). A function of the layout's shape
/// only (stages, model chunks, schedule, micro-batches, training), so a sweep may build it once
/// for the configurations that share it.
struct ClosedFormStepOrder {
  std::vector<std::vector<PipelineSlot>> schedule;  ///< by stage
  /// By stage: the most forward slots not yet backward at any point of its schedule (at least 1).
  std::vector<int64_t> in_flight;
};

/// The step order of `options` (its micro-batches and schedule) on `cell`'s stages and chunks.
ClosedFormStepOrder closed_form_step_order(const ClosedFormCell& cell, const ParallelismOptions& options);

/// What closed_form_step_order depends on, as text: configurations with the same key share an order.
std::string closed_form_step_order_key(const ClosedFormCell& cell, const ParallelismOptions& options);

/// What one step's recurrence on a cell leaves for the next step of the same cell and schedule
/// with other micro-batches (plain GPipe or 1F1B, one model chunk per stage): when each stage's
/// forward and backward slot of each micro-batch ended. Two such schedules of M < M' micro-batches
/// begin alike on every stage (GPipe: the M forwards; 1F1B: the warm-up and the steady slots of
/// M, min(K - s - 1, M) + 2 (M - min(K - s - 1, M)) of them), and every slot of that common
/// beginning but either step's last on its stage waits for slots of the common beginnings only
/// (a forward for the previous stage's forward of its micro-batch, a backward for the next
/// stage's backward of it, and for its stage's slot before it): it ends at the same time in both
/// steps, to the last bit, and the later step copies it instead of computing it again.
struct ClosedFormRecurrence {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  bool training = true;
  size_t stages = 0;
  int64_t micro_batches = 0;  ///< 0: nothing recorded
  /// By (stage, micro-batch) at stage x micro_batches + micro-batch: when the slot ended.
  std::vector<double> forward_end, backward_end;
};

/// The step of `options` (its micro-batches and schedule) from its cell: the recurrence over
/// every slot and each stage's peak memory. `cell` must be analyse_3d_cell's of the same layout
/// with the same micro-batch share (a sweep reuses one across schedules); `order`
/// closed_form_step_order's for them. Of `options` it reads the micro-batches and the schedule
/// only, so one cell and one step-order key give one estimate (the search screen keeps it for its
/// ZeRO variants). `recurrence` (may be null): another step's on the same cell, whose common
/// beginning with this one it copies when it has this one's schedule and stages; this step's
/// replaces it when it has more micro-batches (the longer a step, the more of the next it serves).
ClosedFormStepEstimate estimate_3d_step_from_cell(const ClosedFormCell& cell, const ParallelismOptions& options,
                                                  const ClosedFormStepOrder& order,
                                                  ClosedFormRecurrence* recurrence = nullptr);
/// The same, building the order.
ClosedFormStepEstimate estimate_3d_step_from_cell(const ClosedFormCell& cell, const ParallelismOptions& options);

/// Whether `cell` has the stages, model chunks and one-micro-batch slot order of `options` (GPipe
/// and 1F1B run one micro-batch alike), so that estimate_3d_step_from_cell may use it.
bool cell_fits(const ClosedFormCell& cell, const ParallelismOptions& options);

/// One step of `options` (tensor x pipeline x data, its schedule and micro-batches) on `cluster`:
/// estimate_3d_step_from_cell(analyse_3d_cell(...)).
ClosedFormStepEstimate estimate_3d_step_closed_form(const OpGraph& graph, const Cluster& cluster,
                                                    const RunOptions& run, const ParallelismOptions& options);

}  // namespace placesim
