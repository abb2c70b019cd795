#include "sim/analytical/pipeline_closed_form.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/analytical/analytical_engine.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/pipeline_builder.h"

namespace placesim {
namespace {

/// The static part of a memory breakdown: parameters, gradients and optimizer state.
MemoryBreakdown static_breakdown(const StaticMemory& memory) {
  MemoryBreakdown breakdown;
  breakdown.parameter_bytes = memory.parameter_bytes;
  breakdown.gradient_bytes = memory.gradient_bytes;
  breakdown.optimizer_state_bytes = memory.optimizer_state_bytes;
  return breakdown;
}

constexpr double kNever = -std::numeric_limits<double>::infinity();

/// What the analytical tier's list schedule reads of `task` (analytical_engine.h: its kind,
/// device, cost and network fields), without its name, op name, dependencies or memory: the
/// closed form list-schedules parts of a cell plan several times, and copying the names and
/// buffer lists took more of its time than scheduling them.
Task scheduled_part(const Task& task) {
  Task part;
  part.id = task.id;
  part.kind = task.kind;
  part.phase = task.phase;
  part.step = task.step;
  part.device = task.device;
  part.op_kind = task.op_kind;
  part.flops = task.flops;
  part.memory_bytes = task.memory_bytes;
  part.kernel = task.kernel;
  part.kernel_passes = task.kernel_passes;
  part.kernel_samples = task.kernel_samples;
  part.source = task.source;
  part.bytes = task.bytes;
  if (task.kind == TaskKind::kCollective) part.group = task.group;
  part.algorithm = task.algorithm;
  part.collective = task.collective;
  part.transport = task.transport;
  part.fixed_seconds = task.fixed_seconds;
  part.replica = task.replica;
  part.compute_scale = task.compute_scale;
  return part;
}

/// A plan with what the list schedule reads of `plan` (its precision, memory format, transports
/// and slowest GPU's factor) and no tasks, for parts of `plan` to be list-scheduled.
ExecutionPlan empty_like(const ExecutionPlan& plan) {
  ExecutionPlan part;
  part.precision = plan.precision;
  part.memory_format = plan.memory_format;
  part.transports = plan.transports;
  part.lockstep_gemm_factor = plan.lockstep_gemm_factor;
  return part;
}

/// When each model chunk's slot of each micro-batch ends (one direction, forward or backward), in
/// one array: (chunk, micro-batch) at chunk x micro-batches + micro-batch.
class SlotEnds {
 public:
  SlotEnds(size_t chunks, int64_t micro_batches)
      : micro_batches_(static_cast<size_t>(micro_batches)), ends_(chunks * micro_batches_, kNever) {}
  double& at(size_t chunk, int64_t micro_batch) { return ends_[index(chunk, micro_batch)]; }
  double at(size_t chunk, int64_t micro_batch) const { return ends_[index(chunk, micro_batch)]; }
  std::vector<double> release() { return std::move(ends_); }

 private:
  size_t index(size_t chunk, int64_t micro_batch) const {
    return chunk * micro_batches_ + static_cast<size_t>(micro_batch);
  }
  size_t micro_batches_;
  std::vector<double> ends_;
};

/// How many of stage `stage`'s first slots the plain schedules of `earlier` and `later`
/// micro-batches share, short of either's last slot (ClosedFormRecurrence).
int64_t shared_slots(PipelineSchedule schedule, bool training, size_t stages, size_t stage, int64_t earlier,
                     int64_t later) {
  const int64_t fewer = std::min(earlier, later);
  const int64_t length = training ? 2 * fewer : fewer;  // the shorter schedule's slots
  // Up to where the fewer's schedule turns to its last backwards and the other's goes on with a
  // forward: after its warm-up and steady slots (GPipe and inference: its forwards).
  const int64_t warmup = !training || schedule == PipelineSchedule::kGpipe
                             ? fewer
                             : std::min(static_cast<int64_t>(stages - stage - 1), fewer);
  const int64_t common = earlier == later ? length : warmup + 2 * (fewer - warmup);
  return std::max<int64_t>(0, std::min(common, length - 1));
}

/// Sorts `values` ascending: by insertion while it is nearly sorted (the arrivals below come in
/// their stage's slot order, a few places from their time order), else by std::sort. Pairs compare whole,
/// so every sort gives the same sequence.
void sort_nearly_sorted(std::vector<std::pair<double, double>>* values) {
  std::vector<std::pair<double, double>>& v = *values;
  size_t moves = 0;
  const size_t budget = 8 * v.size();
  for (size_t i = 1; i < v.size(); ++i) {
    const std::pair<double, double> value = v[i];
    size_t j = i;
    for (; j > 0 && value < v[j - 1]; --j) v[j] = v[j - 1];
    v[j] = value;
    moves += i - j;
    if (moves > budget) {  // far from sorted: not worth inserting
      std::sort(v.begin(), v.end());
      return;
    }
  }
}

/// When `slot` ends: the latest of (the stage's previous slot's end + its time alone) and, for
/// each chunk it receives from, (that chunk's slot for `micro_batch` ends + the delay).
double slot_end(const ClosedFormSlot& slot, double previous_end, const SlotEnds& sender_ends, int64_t micro_batch) {
  double result = previous_end + slot.alone_seconds;
  for (const auto& [from, delay] : slot.delay_seconds) result = std::max(result, sender_ends.at(from, micro_batch) + delay);
  return result;
}

/// The cell plan's tasks of one slot: its closing marker, the tasks it waits for on its stage's
/// device (that no earlier slot claimed), and the transfers into it from other stages.
struct SlotTasks {
  TaskId marker = 0;
  std::vector<TaskId> members;  ///< ascending (dependency order), the marker included
  std::vector<TaskId> inputs;
};

class CellPlanReader {
 public:
  /// `prices`: every task of `plan` priced (estimate_step has scheduled the whole plan with them).
  CellPlanReader(const ExecutionPlan& plan, const Cluster& cluster, const std::vector<int64_t>& stage_of,
                 const TaskSeconds& prices)
      : plan_(plan), cluster_(cluster), stage_of_(stage_of), prices_(prices), claimed_(plan.tasks.size(), false),
        chunk_of_(plan.tasks.size(), 0), position_(plan.tasks.size(), -1) {}

  /// The slot of model chunk `chunk` that `marker` closes. A stage's slots must be claimed in
  /// the stage's order: each takes what the earlier ones left.
  SlotTasks claim(TaskId marker, size_t chunk) {
    const int64_t stage = stage_of_[plan_.tasks[marker].device];
    SlotTasks slot{marker, {marker}, {}};
    claimed_[marker] = true;
    for (size_t i = 0; i < slot.members.size(); ++i) {
      for (TaskId dep : plan_.tasks[slot.members[i]].deps) {
        const Task& task = plan_.tasks[dep];
        if (claimed_[dep] || stage_of_[task.device] != stage) continue;
        claimed_[dep] = true;
        if (gathers_from_another_stage(task)) {
          // Megatron's scatter/gather: the pieces and their all-gather arrive as one input.
          for (TaskId piece : task.deps) claimed_[piece] = true;
          slot.inputs.push_back(dep);
          continue;
        }
        (task.kind == TaskKind::kTransfer && task.source != task.device ? slot.inputs : slot.members).push_back(dep);
      }
    }
    std::sort(slot.members.begin(), slot.members.end());
    for (TaskId id : slot.members) chunk_of_[id] = chunk;
    return slot;
  }

  /// The bytes `input` holds on its stage's device until consumed: a transfer's, or an
  /// all-gather's whole tensor plus the piece that landed on that device.
  double input_bytes(TaskId input) const {
    const Task& task = plan_.tasks[input];
    double bytes = task.output_bytes;
    if (gathers_from_another_stage(task)) {
      for (TaskId piece : task.deps) {
        if (plan_.tasks[piece].device == task.device) bytes += plan_.tasks[piece].output_bytes;
      }
    }
    return bytes;
  }

  /// The chunk whose slot sends `input` (a transfer, or the all-gather of scattered pieces): the
  /// one that claimed what it carries.
  size_t sender(TaskId input) const {
    const Task& task = plan_.tasks[input];
    const TaskId transfer = gathers_from_another_stage(task) ? task.deps.front() : input;
    return chunk_of_[plan_.tasks[transfer].deps.front()];
  }

  /// The tasks from `first` on, on `stage`'s device, that no slot claimed (all-reduces, updates).
  std::vector<TaskId> unclaimed(int64_t stage, TaskId first) const {
    std::vector<TaskId> tasks;
    for (TaskId id = first; id < plan_.tasks.size(); ++id) {
      if (!claimed_[id] && stage_of_[plan_.tasks[id].device] == stage) tasks.push_back(id);
    }
    return tasks;
  }

  /// `tasks` (ascending) list-scheduled by themselves, every other dependency met at time 0:
  /// when `marker` ends, and when the last of them does.
  std::pair<double, double> alone(const std::vector<TaskId>& tasks, TaskId marker) {
    ExecutionPlan alone = empty_like(plan_);
    alone.tasks.reserve(tasks.size());
    TaskSeconds prices(tasks.size());  // each task's time alone, as the whole plan's schedule priced it
    // `tasks` ascend: a task's new id is its position among them (position_, cleared after).
    if (!std::is_sorted(tasks.begin(), tasks.end())) throw std::logic_error("closed form: a slot's tasks out of order");
    for (size_t i = 0; i < tasks.size(); ++i) position_[tasks[i]] = static_cast<int64_t>(i);
    for (TaskId id : tasks) {
      const Task& original = plan_.tasks[id];
      Task task = scheduled_part(original);
      task.id = alone.tasks.size();
      task.deps.reserve(original.deps.size());
      for (TaskId dep : original.deps) {
        if (position_[dep] >= 0) task.deps.push_back(static_cast<TaskId>(position_[dep]));
      }
      prices.seconds[alone.tasks.size()] = prices_.seconds[id];
      alone.tasks.push_back(std::move(task));
    }
    const int64_t marker_position = position_[marker];
    for (TaskId id : tasks) position_[id] = -1;
    if (marker_position < 0) throw std::logic_error("closed form: a slot's marker outside its tasks");
    const Timeline timeline = estimate_step(alone, cluster_, &prices).timeline;
    return {timeline.tasks[static_cast<size_t>(marker_position)].end_seconds, timeline.makespan_seconds()};
  }

 private:
  bool crosses_stages(const Task& task) const {
    return task.kind == TaskKind::kTransfer && task.source != task.device &&
           stage_of_[task.source] != stage_of_[task.device];
  }
  /// A collective whose every dependency is a transfer from another stage (scatter/gather).
  bool gathers_from_another_stage(const Task& task) const {
    if (task.kind != TaskKind::kCollective || task.deps.empty()) return false;
    for (TaskId dep : task.deps) {
      if (!crosses_stages(plan_.tasks[dep])) return false;
    }
    return true;
  }

  const ExecutionPlan& plan_;
  const Cluster& cluster_;
  const std::vector<int64_t>& stage_of_;
  const TaskSeconds& prices_;
  std::vector<bool> claimed_;
  std::vector<size_t> chunk_of_;  ///< by task: the chunk of the slot that claimed it
  std::vector<int64_t> position_;  ///< by task: its place in the tasks alone() schedules now, else -1
};

/// Waiting for its inputs, a slot ends (at `end_seconds` in `timeline`) as long after its latest
/// input's arrival as it did in the cell plan, where every slot but a stage's first waits for
/// its inputs; an input arrives as long after its sender's slot ended (`sender_end`) as there.
template <typename SenderEnd>
ClosedFormSlot model_slot(const SlotTasks& slot, double alone_seconds, const CellPlanReader& reader, const Timeline& timeline,
                     double end_seconds, SenderEnd sender_end) {
  ClosedFormSlot model;
  model.alone_seconds = alone_seconds;
  double latest_arrival = kNever;
  for (TaskId input : slot.inputs) latest_arrival = std::max(latest_arrival, timeline.tasks[input].end_seconds);
  for (TaskId input : slot.inputs) {
    const size_t from = reader.sender(input);
    const double delay = timeline.tasks[input].end_seconds - sender_end(from) + (end_seconds - latest_arrival);
    auto entry = std::lower_bound(model.delay_seconds.begin(), model.delay_seconds.end(), from,
                                  [](const std::pair<size_t, double>& a, size_t key) { return a.first < key; });
    if (entry != model.delay_seconds.end() && entry->first == from) {
      entry->second = std::max(entry->second, delay);
    } else {
      model.delay_seconds.insert(entry, {from, delay});
    }
  }
  return model;
}

/// The allocations (bytes) and releases (-bytes) of `buffers` (one device's) by time, a release
/// before an allocation at the same instant: what peak_between scans.
std::vector<std::pair<double, double>> buffer_events(const std::vector<const BufferLifetime*>& buffers) {
  std::vector<std::pair<double, double>> events;  // (time, bytes allocated or, negative, released)
  for (const BufferLifetime* buffer_of_device : buffers) {
    const BufferLifetime& buffer = *buffer_of_device;
    if (buffer.bytes <= 0) continue;
    events.emplace_back(buffer.start_seconds, buffer.bytes);
    events.emplace_back(buffer.release_seconds, -buffer.bytes);
  }
  std::sort(events.begin(), events.end());
  return events;
}

/// The most bytes the buffers of `events` (buffer_events) hold at once between `from` and `to`
/// (a release before an allocation at the same instant, as peak_live_bytes counts them), and the
/// last instant they do.
std::pair<double, double> peak_between(const std::vector<std::pair<double, double>>& events, double from, double to) {
  double live = 0, peak = 0, when = from;
  for (size_t i = 0; i < events.size();) {
    const double time = events[i].first;
    while (i < events.size() && events[i].first == time) live += events[i++].second;
    const double next = i < events.size() ? events[i].first : std::numeric_limits<double>::infinity();
    if (time <= to && next > from && live >= peak) {
      peak = live;
      when = std::min(next, to);
    }
  }
  return {peak, when};
}

/// The slots of one micro-batch on each of `stages` stages, in each stage's order.
std::vector<std::vector<PipelineSlot>> one_micro_batch_schedule(const ParallelismOptions& options, bool training) {
  const size_t stages = static_cast<size_t>(options.pipeline);
  std::vector<std::vector<PipelineSlot>> schedule(stages);
  for (size_t s = 0; s < stages; ++s) {
    schedule[s] = options.virtual_stages > 1 ? interleaved_schedule(stages, s, options.virtual_stages, 1, training)
                                             : pipeline_schedule(options.schedule, stages, s, 1, training);
  }
  return schedule;
}

}  // namespace

bool cell_fits(const ClosedFormCell& cell, const ParallelismOptions& options) {
  return cell.stages == static_cast<size_t>(options.pipeline) && cell.chunks == options.virtual_stages &&
         cell.cell_schedule == one_micro_batch_schedule(options, cell.training);
}

ClosedFormCell analyse_3d_cell(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                               const ParallelismOptions& options) {
  ClosedFormCell cell;
  const size_t stages = static_cast<size_t>(options.pipeline);
  const int64_t chunks = options.virtual_stages;
  const size_t model_chunks = stages * static_cast<size_t>(chunks);  // = stages without interleaving
  const bool training = run.kind == StepKind::kTraining;
  cell.stages = stages;
  cell.chunks = chunks;
  cell.training = training;

  // One micro-batch through every stage, estimated with and without the updates: they
  // interleave with a stage's last slot only.
  PipelineCells cells;
  const ExecutionPlan plan = build_parallel_3d_cell_plan(graph, cluster, run, options, &cells);
  const bool updates = cells.first_update_task != PipelineCells::kNone;
  // The slots: the tasks before the first update, which wait for none of the updates.
  std::vector<bool> slot_tasks(plan.tasks.size(), true);
  if (updates) std::fill(slot_tasks.begin() + static_cast<std::ptrdiff_t>(cells.first_update_task), slot_tasks.end(), false);
  // Each task priced once (for these two schedules and every slot's alone), its successors
  // listed once (for the two schedules and the memory pass).
  TaskSeconds prices(plan.tasks.size());
  const SuccessorLists successors = plan.successors();
  const Timeline slots_timeline =
      estimate_step(plan, cluster, &prices, updates ? &slot_tasks : nullptr, &successors).timeline;
  const Timeline timeline =
      updates ? estimate_step(plan, cluster, &prices, nullptr, &successors).timeline : slots_timeline;
  std::vector<int64_t> stage_of(cluster.devices().size(), -1);
  for (size_t s = 0; s < stages; ++s) stage_of[options.device(0, static_cast<int64_t>(s), 0)] = static_cast<int64_t>(s);

  // The cell plan's slots, by model chunk, claimed in the order each stage runs them.
  CellPlanReader reader(plan, cluster, stage_of, prices);
  cell.cell_schedule = one_micro_batch_schedule(options, training);
  const std::vector<std::vector<PipelineSlot>>& cell_schedule = cell.cell_schedule;
  const bool backward_slots = training && cells.backward_done.front() != PipelineCells::kNone;
  cell.backward_slots = backward_slots;
  std::vector<SlotTasks> forward_tasks(model_chunks), backward_tasks(backward_slots ? model_chunks : 0);
  for (const auto& [s, slot] : emission_order(cell_schedule, 1, chunks)) {
    const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
    if (slot.forward) {
      forward_tasks[c] = reader.claim(cells.forward_done[c], c);
    } else if (backward_slots) {
      backward_tasks[c] = reader.claim(cells.backward_done[c], c);
    }
  }

  cell.cell_plan_tasks = plan.tasks.size();
  cell.lockstep_gemm_factor = plan.lockstep_gemm_factor;
  cell.lockstep_gpus = plan.lockstep_gpus;
  cell.forward.resize(model_chunks);
  cell.backward.resize(model_chunks);
  cell.last.resize(stages);
  cell.finish.resize(stages);
  auto end_in = [](const Timeline& t, TaskId id) { return t.tasks[id].end_seconds; };
  for (size_t c = 0; c < model_chunks; ++c) {
    const SlotTasks& f = forward_tasks[c];
    cell.forward[c] = model_slot(f, reader.alone(f.members, f.marker).first, reader, slots_timeline,
                                 end_in(slots_timeline, f.marker),
                                 [&](size_t from) { return end_in(slots_timeline, cells.forward_done[from]); });
    if (backward_slots) {
      const SlotTasks& b = backward_tasks[c];
      cell.backward[c] = model_slot(b, reader.alone(b.members, b.marker).first, reader, slots_timeline,
                                    end_in(slots_timeline, b.marker),
                                    [&](size_t from) { return end_in(slots_timeline, cells.backward_done[from]); });
    }
  }
  // A stage's last slot with the updates that interleave with it: when its marker ends (the
  // stages it sends to wait for that) and when the stage's last task does. The last slot is the
  // same chunk's in the cell plan and in the step (chunk 0's backward; the last chunk's forward
  // in inference).
  const std::vector<TaskId>& last_markers = backward_slots ? cells.backward_done : cells.forward_done;
  for (size_t s = 0; s < stages; ++s) {
    const size_t c = static_cast<size_t>(cell_schedule[s].back().chunk) * stages + s;
    if (!updates) {
      cell.last[s] = cell.finish[s] = backward_slots ? cell.backward[c] : cell.forward[c];
      continue;
    }
    const SlotTasks& slot = backward_slots ? backward_tasks[c] : forward_tasks[c];
    std::vector<TaskId> with_updates = slot.members;
    for (TaskId id : reader.unclaimed(static_cast<int64_t>(s), cells.first_update_task)) with_updates.push_back(id);
    const auto [marker_end, stage_end] = reader.alone(with_updates, slot.marker);
    double stage_end_in_plan = 0;
    for (TaskId id : with_updates) stage_end_in_plan = std::max(stage_end_in_plan, end_in(timeline, id));
    auto sender_end = [&](size_t from) { return end_in(timeline, last_markers[from]); };
    cell.last[s] = model_slot(slot, marker_end, reader, timeline, end_in(timeline, slot.marker), sender_end);
    cell.finish[s] = model_slot(slot, stage_end, reader, timeline, stage_end_in_plan, sender_end);
  }

  // Interleaved, for memory: each slot's received inputs (activations or gradients), which start
  // to arrive as long after their sender's slot ended as in the cell plan.
  auto inputs_of = [&](const SlotTasks& slot, const std::vector<TaskId>& sender_markers) {
    std::vector<ClosedFormCell::Input> inputs;
    for (TaskId input : slot.inputs) {
      const size_t from = reader.sender(input);
      inputs.push_back({from, slots_timeline.tasks[input].start_seconds - end_in(slots_timeline, sender_markers[from]),
                        reader.input_bytes(input)});
    }
    return inputs;
  };
  cell.forward_inputs.resize(model_chunks);
  cell.backward_inputs.resize(model_chunks);
  for (size_t c = 0; c < model_chunks; ++c) {
    cell.forward_inputs[c] = inputs_of(forward_tasks[c], cells.forward_done);
    if (backward_slots) cell.backward_inputs[c] = inputs_of(backward_tasks[c], cells.backward_done);
  }

  // Memory. One micro-batch's peak of live buffers on each representative device, and what each
  // of its chunks there keeps across the gap between its forward and backward slots (allocated
  // during the forward slot and before the backward slot starts, released after it starts); the
  // schedule keeps up to k micro-batches (interleaved: micro-batch chunks) in flight on a stage,
  // so while one peaks, the others hold what they keep.
  const std::vector<BufferLifetime> buffers = buffer_lifetimes(plan, timeline, &successors);
  const std::vector<double> workspace = workspace_bytes(plan, cluster.devices().size());
  // By stage: the buffers on its representative device, in the order buffer_lifetimes gives them.
  std::vector<std::vector<const BufferLifetime*>> stage_buffers(stages);
  for (const BufferLifetime& buffer : buffers) {
    const int64_t stage = stage_of[buffer.device];
    if (stage >= 0) stage_buffers[static_cast<size_t>(stage)].push_back(&buffer);
  }
  cell.kept_bytes.assign(stages, std::vector<double>(static_cast<size_t>(chunks), 0));
  cell.slot_peaks.resize(stages);
  for (size_t s = 0; s < stages; ++s) {
    const DeviceId device = options.device(0, static_cast<int64_t>(s), 0);
    std::vector<double>& kept = cell.kept_bytes[s];  // by the stage's chunk
    double previous_end = kNever;  // the stage's previous forward slot in the cell plan
    for (const PipelineSlot& slot : cell_schedule[s]) {
      if (!backward_slots || !slot.forward) continue;
      const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
      const double forward_slot_end = end_in(timeline, cells.forward_done[c]);
      double backward_start = std::numeric_limits<double>::infinity();
      for (TaskId id : backward_tasks[c].members) backward_start = std::min(backward_start, timeline.tasks[id].start_seconds);
      for (const BufferLifetime* buffer : stage_buffers[s]) {
        if (buffer->start_seconds > previous_end && buffer->start_seconds <= forward_slot_end &&
            buffer->start_seconds < backward_start && buffer->release_seconds > backward_start) {
          kept[static_cast<size_t>(slot.chunk)] += buffer->bytes;
        }
      }
      previous_end = forward_slot_end;
    }
    // The stage's buffers over the whole cell plan: their peak is the cell's (peak_live_bytes'
    // rule, on the representative device only, not on every device of the cluster).
    const std::vector<std::pair<double, double>> events = buffer_events(stage_buffers[s]);
    const double cell_peak = peak_between(events, -std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::infinity()).first;
    if (chunks > 1) {
      // Each cell slot's peak (one micro-batch, `open` of its chunks open before it).
      std::vector<int64_t> open_of(static_cast<size_t>(chunks), 0);
      for (const PipelineSlot& slot : cell_schedule[s]) {
        const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
        const SlotTasks& tasks = slot.forward ? forward_tasks[c] : backward_tasks[c];
        double start = std::numeric_limits<double>::infinity();
        for (TaskId id : tasks.members) start = std::min(start, timeline.tasks[id].start_seconds);
        const double end = end_in(timeline, tasks.marker);
        const auto [peak, when] = peak_between(events, start, end);
        cell.slot_peaks[s][{slot.forward, slot.chunk}] = {peak, end - when, open_of};
        open_of[static_cast<size_t>(slot.chunk)] += slot.forward ? 1 : -1;
      }
    }
    cell.static_memory.push_back(
        static_breakdown(device < plan.static_memory.size() ? plan.static_memory[device] : StaticMemory{}));
    cell.expert_static_memory.push_back(static_breakdown(cells.expert_static_memory.at(s)));
    cell.cell_peak_bytes.push_back(cell_peak);
    cell.workspace_bytes.push_back(workspace[device]);
    cell.capacity_bytes.push_back(cluster.device(device).spec.memory_bytes);
  }
  return cell;
}

ClosedFormStepOrder closed_form_step_order(const ClosedFormCell& cell, const ParallelismOptions& options) {
  ClosedFormStepOrder order;
  order.schedule.resize(cell.stages);
  for (size_t s = 0; s < cell.stages; ++s) {
    order.schedule[s] = cell.chunks > 1
                            ? interleaved_schedule(cell.stages, s, cell.chunks, options.micro_batches, cell.training)
                            : pipeline_schedule(options.schedule, cell.stages, s, options.micro_batches, cell.training);
  }
  order.in_flight.reserve(cell.stages);
  for (const std::vector<PipelineSlot>& slots : order.schedule) {
    int64_t in_flight = 1, open = 0;
    for (const PipelineSlot& slot : slots) {
      open += slot.forward ? 1 : -1;
      in_flight = std::max(in_flight, open);
    }
    order.in_flight.push_back(in_flight);
  }
  return order;
}

std::string closed_form_step_order_key(const ClosedFormCell& cell, const ParallelismOptions& options) {
  // Interleaved schedules have one order whatever `schedule` says (it must be 1F1B).
  const int schedule = cell.chunks > 1 ? -1 : static_cast<int>(options.schedule);
  return std::to_string(cell.stages) + "/" + std::to_string(cell.chunks) + "/" + std::to_string(schedule) + "/" +
         std::to_string(options.micro_batches) + "/" + (cell.training ? "t" : "i");
}

ClosedFormStepEstimate estimate_3d_step_from_cell(const ClosedFormCell& cell, const ParallelismOptions& options) {
  return estimate_3d_step_from_cell(cell, options, closed_form_step_order(cell, options));
}

ClosedFormStepEstimate estimate_3d_step_from_cell(const ClosedFormCell& cell, const ParallelismOptions& options,
                                                  const ClosedFormStepOrder& order, ClosedFormRecurrence* recurrence) {
  const size_t stages = cell.stages;
  const int64_t chunks = cell.chunks;
  const size_t model_chunks = stages * static_cast<size_t>(chunks);
  const int64_t micro_batches = options.micro_batches;
  const bool backward_slots = cell.backward_slots;

  ClosedFormStepEstimate estimate;
  estimate.cell_plan_tasks = cell.cell_plan_tasks;
  estimate.lockstep_gemm_factor = cell.lockstep_gemm_factor;
  estimate.lockstep_gpus = cell.lockstep_gpus;
  estimate.forward_slot_seconds.assign(stages, 0);
  estimate.backward_slot_seconds.assign(stages, 0);
  for (size_t c = 0; c < model_chunks; ++c) {
    estimate.forward_slot_seconds[c % stages] += cell.forward[c].alone_seconds;
    if (backward_slots) estimate.backward_slot_seconds[c % stages] += cell.backward[c].alone_seconds;
  }

  // Every slot of every stage, in an order in which each slot's inputs come first.
  const std::vector<std::vector<PipelineSlot>>& schedule = order.schedule;
  SlotEnds forward_end(model_chunks, micro_batches), backward_end(model_chunks, micro_batches);
  std::vector<double> stage_free(stages, 0);
  std::vector<size_t> slots_done(stages, 0);
  estimate.stage_end_seconds.assign(stages, 0);
  const bool interleaved = chunks > 1;
  // The slots this step shares with the recorded one (ClosedFormRecurrence): copied, each stage
  // then going on from the first slot it does not share.
  const bool copies = recurrence && chunks == 1 && recurrence->micro_batches > 0 && recurrence->stages == stages &&
                      recurrence->schedule == options.schedule && recurrence->training == cell.training;
  if (copies && (recurrence->forward_end.size() != stages * static_cast<size_t>(recurrence->micro_batches) ||
                 recurrence->backward_end.size() != recurrence->forward_end.size())) {
    throw std::logic_error("closed form: a recorded recurrence without an end time for each of its slots");
  }
  std::vector<size_t> first_slot(stages, 0);
  if (copies) {
    const int64_t recorded = recurrence->micro_batches;
    for (size_t s = 0; s < stages; ++s) {
      const size_t shared =
          static_cast<size_t>(shared_slots(options.schedule, cell.training, stages, s, recorded, micro_batches));
      for (size_t i = 0; i < shared; ++i) {
        const PipelineSlot& slot = schedule[s][i];
        const std::vector<double>& recorded_end = slot.forward ? recurrence->forward_end : recurrence->backward_end;
        stage_free[s] = (slot.forward ? forward_end : backward_end).at(s, slot.micro_batch) =
            recorded_end[s * static_cast<size_t>(recorded) + static_cast<size_t>(slot.micro_batch)];
      }
      slots_done[s] = first_slot[s] = shared;
    }
  }
  // In emission order (pipeline_builder.h), a slot visited once its end time is set.
  visit_in_emission_order(
      schedule, chunks,
      [&](bool forward, size_t c, int64_t m) { return (forward ? forward_end : backward_end).at(c, m) != kNever; },
      [&](size_t s, const PipelineSlot& slot) {
        const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
        const int64_t m = slot.micro_batch;
        auto& ends = slot.forward ? forward_end : backward_end;
        const bool last_slot = ++slots_done[s] == schedule[s].size();
        const ClosedFormSlot& model = last_slot ? cell.last[s] : slot.forward ? cell.forward[c] : cell.backward[c];
        if (last_slot) estimate.stage_end_seconds[s] = slot_end(cell.finish[s], stage_free[s], ends, m);
        ends.at(c, m) = stage_free[s] = slot_end(model, stage_free[s], ends, m);
      },
      &first_slot);
  for (size_t s = 0; s < stages; ++s) estimate.step_seconds = std::max(estimate.step_seconds, estimate.stage_end_seconds[s]);

  // With one micro-batch (chunk) in flight nothing is kept beside the one that peaks.
  const std::vector<double> nothing_kept(static_cast<size_t>(chunks), 0);
  // Interleaved, by stage: (start, bytes) of each input its forward and its backward slots
  // receive (activations, gradients), which starts to arrive as long after its sender's slot
  // ended as in the cell plan; in the stage's order, each list nearly ascends.
  std::vector<std::pair<double, double>> forward_arrivals, backward_arrivals, received;
  for (size_t s = 0; s < stages; ++s) {
    // Inference: nothing waits for a backward.
    const int64_t in_flight = backward_slots ? order.in_flight[s] : 1;
    const std::vector<double>& kept = in_flight == 1 ? nothing_kept : cell.kept_bytes[s];
    double activation = cell.cell_peak_bytes[s] + static_cast<double>(in_flight - 1) * kept[0];
    if (interleaved) {
      // The chunks keep different amounts and the heaviest slot need not run at the schedule's
      // fullest point: each slot of the step peaks as its cell-plan slot did (one micro-batch,
      // `open` of its chunks open before it), plus what the other micro-batch chunks open
      // beside it keep, plus the inputs that have begun to arrive for later slots (the warm-up
      // runs the senders ahead).
      forward_arrivals.clear();
      backward_arrivals.clear();
      for (const PipelineSlot& slot : schedule[s]) {
        const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
        const SlotEnds& ends = slot.forward ? forward_end : backward_end;
        auto& arrivals = slot.forward ? forward_arrivals : backward_arrivals;
        for (const ClosedFormCell::Input& input : slot.forward ? cell.forward_inputs[c] : cell.backward_inputs[c]) {
          arrivals.emplace_back(ends.at(input.from, slot.micro_batch) + input.offset_seconds, input.bytes);
        }
      }
      // Each sorted (pairs compare whole, so any sort gives the same sequence), then merged.
      for (auto* arrivals : {&forward_arrivals, &backward_arrivals}) {
        if (!std::is_sorted(arrivals->begin(), arrivals->end())) sort_nearly_sorted(arrivals);
      }
      received.resize(forward_arrivals.size() + backward_arrivals.size());
      std::merge(forward_arrivals.begin(), forward_arrivals.end(), backward_arrivals.begin(), backward_arrivals.end(),
                 received.begin());
      size_t next_arrival = 0;
      double arrived = 0, consumed = 0;  // inputs begun to arrive by a slot's end; those of it and earlier slots
      std::vector<int64_t> open_of(static_cast<size_t>(chunks), 0);
      // The cell's slot peaks by (direction, chunk), looked up once per stage, not once per slot.
      std::vector<const ClosedFormCell::SlotPeak*> peak_of(2 * static_cast<size_t>(chunks), nullptr);
      for (const auto& [which, peak] : cell.slot_peaks[s]) {
        peak_of[static_cast<size_t>(which.second) * 2 + (which.first ? 1 : 0)] = &peak;
      }
      activation = cell.cell_peak_bytes[s];
      for (size_t i = 0; i < schedule[s].size(); ++i) {
        const PipelineSlot& slot = schedule[s][i];
        const size_t c = static_cast<size_t>(slot.chunk) * stages + s;
        for (const ClosedFormCell::Input& input : slot.forward ? cell.forward_inputs[c] : cell.backward_inputs[c]) {
          consumed += input.bytes;
        }
        const ClosedFormCell::SlotPeak* found = peak_of[static_cast<size_t>(slot.chunk) * 2 + (slot.forward ? 1 : 0)];
        if (!found) throw std::logic_error("closed form: a slot without its cell-plan peak");
        const ClosedFormCell::SlotPeak& peak = *found;
        const double ends_seconds = (slot.forward ? forward_end : backward_end).at(c, slot.micro_batch);
        while (next_arrival < received.size() &&
               received[next_arrival].first < ends_seconds - peak.peak_before_end_seconds) {
          arrived += received[next_arrival++].second;
        }
        double held = peak.peak_bytes + std::max(0.0, arrived - consumed);
        for (size_t k = 0; k < kept.size(); ++k) held += static_cast<double>(open_of[k] - peak.open[k]) * kept[k];
        activation = std::max(activation, held);
        open_of[static_cast<size_t>(slot.chunk)] += slot.forward ? 1 : -1;
      }
    }
    MemoryBreakdown memory = cell.static_memory[s];
    memory.activation_bytes = activation;
    memory.workspace_bytes = cell.workspace_bytes[s];
    estimate.stage_peak_memory.push_back(memory);
    estimate.stage_micro_batches_in_flight.push_back(in_flight);
    estimate.stage_memory_capacity_bytes.push_back(cell.capacity_bytes[s]);
  }
  // Kept for the next step: this one when the record is of another schedule or of fewer micro-batches.
  if (recurrence && chunks == 1 && (!copies || micro_batches >= recurrence->micro_batches)) {
    recurrence->schedule = options.schedule;
    recurrence->training = cell.training;
    recurrence->stages = stages;
    recurrence->micro_batches = micro_batches;
    recurrence->forward_end = forward_end.release();
    recurrence->backward_end = backward_end.release();
  }
  return estimate;
}

ClosedFormStepEstimate estimate_3d_step_closed_form(const OpGraph& graph, const Cluster& cluster,
                                                    const RunOptions& run, const ParallelismOptions& options) {
  return estimate_3d_step_from_cell(analyse_3d_cell(graph, cluster, run, options), options);
}

}  // namespace placesim
