#include "sim/planner/pipeline_builder.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/core/glob.h"
#include "sim/spec/spec_error.h"
#include "sim/core/units_format.h"
#include "sim/planner/lockstep_devices.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/plan_builder.h"
#include "sim/planner/step_emitter.h"

namespace placesim {
namespace {

constexpr size_t kUnassigned = kUnassignedStage;

double op_compute(const Op& op) { return op.forward_flops + op.backward_flops; }

/// Ops still unassigned join their first (lowest-stage) consumer's stage, else their
/// predecessor's in topological order.
void assign_followers(const OpGraph& graph, const std::vector<OpId>& order, std::vector<size_t>* stage_of) {
  auto& stage = *stage_of;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (stage[*it] != kUnassigned) continue;
    for (const auto& output : graph.outputs(*it)) {
      if (stage[output.op] != kUnassigned) stage[*it] = std::min(stage[*it], stage[output.op]);
    }
  }
  size_t previous = 0;
  for (OpId v : order) {
    if (stage[v] == kUnassigned) stage[v] = previous;
    previous = stage[v];
  }
}

/// assign_followers, then the checks: no edge back to an earlier stage, no stage without an op.
std::vector<size_t> complete_stages(const OpGraph& graph, const std::vector<OpId>& order, std::vector<size_t> stage_of,
                                    size_t stages) {
  assign_followers(graph, order, &stage_of);

  std::vector<size_t> ops_per_stage(stages, 0);
  for (OpId v : order) {
    ++ops_per_stage[stage_of[v]];
    for (const auto& input : graph.inputs(v)) {
      if (stage_of[input.op] > stage_of[v]) {
        throw SpecError::strategy("pipeline/stages",
                         "op \"" + graph.op(v).name + "\" (stage " + std::to_string(stage_of[v]) + ") reads \"" +
                             graph.op(input.op).name + "\" from the later stage " +
                             std::to_string(stage_of[input.op]) + ": stages must follow the graph's order");
      }
    }
  }
  for (size_t s = 0; s < stages; ++s) {
    if (ops_per_stage[s] == 0) {
      throw SpecError::strategy("pipeline/stages",
                       "stage " + std::to_string(s) + " gets no op (the graph has " + std::to_string(graph.size()) +
                           " ops): use fewer stages");
    }
  }
  return stage_of;
}

std::string samples(double count) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", count);
  return buffer;
}

/// Throws std::logic_error when a schedule's micro-batches or chunks do not fit a PipelineSlot
/// (far beyond any plan placesim builds: the plan size limits refuse such steps first).
void check_slot_range(int64_t micro_batches, int64_t chunks) {
  if (micro_batches > PipelineSlot::kMaxMicroBatches || chunks > PipelineSlot::kMaxChunks) {
    throw std::logic_error("pipeline schedule: " + std::to_string(micro_batches) + " micro-batches of " +
                           std::to_string(chunks) + " chunks do not fit a slot");
  }
}

/// Interleaved 1F1B's forwards (or backwards) in order: groups of `stages` micro-batches, each
/// group through chunk 0, 1, ..., V-1 (backwards: V-1 down to 0).
std::vector<PipelineSlot> interleaved_order(size_t stages, int64_t chunks, int64_t micro_batches, bool forward) {
  std::vector<PipelineSlot> slots;
  slots.reserve(static_cast<size_t>(micro_batches * chunks));
  const int64_t group = static_cast<int64_t>(stages);
  for (int64_t first = 0; first < micro_batches; first += group) {
    const int64_t end = std::min(micro_batches, first + group);
    for (int64_t i = 0; i < chunks; ++i) {
      const int64_t chunk = forward ? i : chunks - 1 - i;
      for (int64_t m = first; m < end; ++m) slots.push_back({forward, m, chunk});
    }
  }
  return slots;
}

}  // namespace

std::vector<PipelineSlot> pipeline_schedule(PipelineSchedule schedule, size_t stages, size_t stage,
                                            int64_t micro_batches, bool training) {
  check_slot_range(micro_batches, 1);
  std::vector<PipelineSlot> slots;
  slots.reserve(static_cast<size_t>(training ? 2 * micro_batches : micro_batches));
  if (!training || schedule == PipelineSchedule::kGpipe) {
    for (int64_t m = 0; m < micro_batches; ++m) slots.push_back({true, m});
    if (training) {
      for (int64_t m = 0; m < micro_batches; ++m) slots.push_back({false, m});
    }
    return slots;
  }
  const int64_t warmup = std::min(static_cast<int64_t>(stages - stage - 1), micro_batches);
  for (int64_t m = 0; m < warmup; ++m) slots.push_back({true, m});
  for (int64_t m = warmup; m < micro_batches; ++m) {
    slots.push_back({true, m});
    slots.push_back({false, m - warmup});
  }
  for (int64_t m = micro_batches - warmup; m < micro_batches; ++m) slots.push_back({false, m});
  return slots;
}

std::vector<PipelineSlot> interleaved_schedule(size_t stages, size_t stage, int64_t chunks, int64_t micro_batches,
                                               bool training) {
  check_slot_range(micro_batches, chunks);
  const std::vector<PipelineSlot> forwards = interleaved_order(stages, chunks, micro_batches, true);
  if (!training) return forwards;
  const std::vector<PipelineSlot> backwards = interleaved_order(stages, chunks, micro_batches, false);
  const int64_t total = static_cast<int64_t>(forwards.size());
  // Megatron-LM: (K - s - 1) x 2 forwards so that each stage's steady state finds its next
  // chunk's input there, plus (V - 1) x K to fill the first group's other chunks.
  const int64_t warmup =
      std::min(static_cast<int64_t>(stages - stage - 1) * 2 + (chunks - 1) * static_cast<int64_t>(stages), total);
  std::vector<PipelineSlot> slots;
  slots.reserve(2 * forwards.size());
  slots.assign(forwards.begin(), forwards.begin() + warmup);
  for (int64_t i = 0; warmup + i < total; ++i) {
    slots.push_back(forwards[static_cast<size_t>(warmup + i)]);
    slots.push_back(backwards[static_cast<size_t>(i)]);
  }
  slots.insert(slots.end(), backwards.begin() + (total - warmup), backwards.end());
  return slots;
}

std::vector<StageSlot> emission_order(const std::vector<std::vector<PipelineSlot>>& schedule, int64_t micro_batches,
                                      int64_t chunks) {
  const size_t chunk_stages = schedule.size() * static_cast<size_t>(chunks);  // model chunks, in model order
  // By (micro-batch, model chunk), flat: one allocation each however many micro-batches.
  std::vector<char> forward_done(size_t(micro_batches) * chunk_stages, 0), backward_done(forward_done);
  size_t slots = 0;
  for (const auto& stage : schedule) slots += stage.size();
  std::vector<StageSlot> order;
  order.reserve(slots);
  visit_in_emission_order(
      schedule, chunks,
      [&](bool forward, size_t c, int64_t m) {
        return (forward ? forward_done : backward_done)[size_t(m) * chunk_stages + c] != 0;
      },
      [&](size_t s, const PipelineSlot& slot) {
        const size_t c = size_t(slot.chunk) * schedule.size() + s;
        (slot.forward ? forward_done : backward_done)[size_t(slot.micro_batch) * chunk_stages + c] = 1;
        order.push_back({s, slot});
      });
  return order;
}

std::vector<size_t> assign_pipeline_stages(const OpGraph& graph, const PipelineOptions& options) {
  std::vector<OpId> order;
  graph.topological_order(&order, nullptr);
  const size_t stages = options.devices.size();
  std::vector<size_t> stage_of(graph.size(), kUnassigned);
  if (!options.stages.empty()) {
    for (OpId v : order) {
      for (size_t s = 0; s < options.stages.size() && stage_of[v] == kUnassigned; ++s) {
        for (const auto& pattern : options.stages[s].ops) {
          if (glob_match(pattern, graph.op(v).name)) {
            stage_of[v] = s;
            break;
          }
        }
      }
    }
  } else {
    double total = 0;
    for (OpId v : order) total += op_compute(graph.op(v));
    // Stage s ends at the cumulative share ends[s] of the compute (s + 1) / stages, or its weights'.
    std::vector<double> ends;
    double weights = 0;
    for (double weight : options.stage_weights) weights += weight;
    double cumulative = 0;
    for (double weight : options.stage_weights) {
      cumulative += weight;
      ends.push_back(cumulative / weights);
    }
    double before = 0;
    for (OpId v : order) {
      double weight = op_compute(graph.op(v));
      if (weight <= 0) continue;
      double midpoint = total > 0 ? (before + weight / 2) / total : 0;
      if (ends.empty()) {
        stage_of[v] = std::min(stages - 1, static_cast<size_t>(midpoint * static_cast<double>(stages)));
      } else {
        stage_of[v] = static_cast<size_t>(std::upper_bound(ends.begin(), ends.end() - 1, midpoint) - ends.begin());
      }
      before += weight;
    }
  }
  return complete_stages(graph, order, std::move(stage_of), stages);
}

std::vector<size_t> complete_pipeline_stages(const OpGraph& graph, std::vector<size_t> stage_of, size_t stages) {
  std::vector<OpId> order;
  graph.topological_order(&order, nullptr);
  return complete_stages(graph, order, std::move(stage_of), stages);
}

ExecutionPlan build_pipeline_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                  const PipelineOptions& options, const std::string& name,
                                  std::vector<std::string>* notes) {
  const size_t stages = options.devices.size();
  const int64_t micro_batches = options.micro_batches;
  if (micro_batches > run.batch_size) {
    throw SpecError::strategy("pipeline/micro_batches",
                     "a batch of " + std::to_string(run.batch_size) + " samples cannot be split into " +
                         std::to_string(micro_batches) + " micro-batches (at most run.batch_size)");
  }
  const double scale = 1.0 / static_cast<double>(micro_batches);
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size);
  set_lockstep_devices(cluster, options.devices, run, &plan);  // the slowest stage paces the rest
  StepEmitter emitter(graph, cluster, run, &plan);
  const bool training = emitter.training();
  const std::vector<size_t> stage_of = assign_pipeline_stages(graph, options);
  auto device_of = [&](OpId v) { return options.devices[stage_of[v]]; };

  std::vector<double> stage_flops(stages, 0);
  std::vector<size_t> stage_ops(stages, 0);
  for (OpId v : emitter.order()) {
    if (!emitter.selected(v)) continue;
    add_static_memory(&plan.static_memory[device_of(v)], op_static_memory(graph.op(v), run));
    stage_flops[stage_of[v]] += op_compute(graph.op(v));
    ++stage_ops[stage_of[v]];
  }
  if (notes) {
    std::string text = std::to_string(stages) + " stages (" + (options.stages.empty() ? "balanced by compute" : "given") +
                       "), " + std::to_string(micro_batches) + " micro-batches of " +
                       samples(static_cast<double>(run.batch_size) * scale) + " samples:";
    for (size_t s = 0; s < stages; ++s) {
      text += (s ? "," : "") + std::string(" ") + cluster.device(options.devices[s]).name.local() + " " +
              std::to_string(stage_ops[s]) + " ops " + format_gigaflops(stage_flops[s]);
    }
    notes->push_back(text);
  }

  std::vector<std::vector<PipelineSlot>> schedule(stages);
  for (size_t s = 0; s < stages; ++s) {
    schedule[s] = pipeline_schedule(options.schedule, stages, s, micro_batches, training);
  }
  std::vector<std::optional<TaskId>> previous_update(graph.size());
  std::vector<std::vector<TaskId>> previous_slot_ends(stages);  // the last slot's sinks, per stage

  for (int64_t step = 0; step < run.steps; ++step) {
    const std::string suffix = StepEmitter::suffix(step);
    // By micro-batch, by OpId.
    std::vector<std::vector<std::optional<TaskId>>> forward(micro_batches, std::vector<std::optional<TaskId>>(graph.size()));
    std::vector<std::vector<std::optional<TaskId>>> backward(micro_batches, std::vector<std::optional<TaskId>>(graph.size()));
    std::vector<std::map<std::pair<OpId, size_t>, TaskId>> received(micro_batches);  // (producer, stage) -> transfer

    auto emit_forward = [&](int64_t m, size_t s) {
      const std::string prefix = "mb" + std::to_string(m) + "/";
      std::vector<TaskId> cell;
      for (OpId v : emitter.order()) {
        if (!emitter.selected(v) || stage_of[v] != s) continue;
        const Op& op = graph.op(v);
        Task task = op_compute_task(op, Phase::kForward, run.kind, device_of(v), step, scale);
        task.name = prefix + "fwd/" + op.name + suffix;
        for (const auto& input : graph.inputs(v)) {
          OpId u = input.op;
          if (!emitter.selected(u)) continue;
          if (input.edge.control || stage_of[u] == s) {
            task.deps.push_back(*forward[m][u]);
            continue;
          }
          auto key = std::make_pair(u, s);
          auto it = received[m].find(key);
          if (it == received[m].end()) {
            TaskId id = emitter.transfer(prefix + graph.op(u).name, device_of(u), task.device,
                                         graph.op(u).output_bytes * scale, {*forward[m][u]}, step, -1, Phase::kTransfer);
            it = received[m].emplace(key, id).first;
          }
          task.deps.push_back(it->second);
        }
        if (op.parameter_count > 0 && previous_update[v]) task.deps.push_back(*previous_update[v]);
        for (TaskId end : previous_slot_ends[s]) task.deps.push_back(end);
        forward[m][v] = emitter.add(std::move(task));
        cell.push_back(*forward[m][v]);
      }
      return cell;
    };

    auto emit_backward = [&](int64_t m, size_t s) {
      const std::string prefix = "mb" + std::to_string(m) + "/";
      std::vector<TaskId> cell;
      const auto& order = emitter.order();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        OpId v = *it;
        if (!emitter.needs_gradient(v) || stage_of[v] != s) continue;
        const Op& op = graph.op(v);
        Task task = op_compute_task(op, Phase::kBackward, run.kind, device_of(v), step, scale);
        if (task.kernel) task.kernel_passes = emitter.backward_kernel_passes(v);
        task.name = prefix + "bwd/" + op.name + suffix;
        bool waits_for_gradient = false;
        for (const auto& output : graph.outputs(v)) {
          OpId consumer = output.op;
          if (!emitter.selected(consumer) || output.edge.control || !backward[m][consumer]) continue;
          waits_for_gradient = true;
          if (stage_of[consumer] == s) {
            task.deps.push_back(*backward[m][consumer]);
          } else {
            task.deps.push_back(emitter.transfer(prefix + "grad/" + op.name, device_of(consumer), task.device,
                                                 output.edge.bytes * scale, {*backward[m][consumer]}, step, -1,
                                                 Phase::kTransfer));
          }
        }
        if (!run.recompute || !waits_for_gradient) task.deps.push_back(*forward[m][v]);
        if (run.recompute) {
          task.flops += op.forward_flops * scale;
          task.memory_bytes += op.forward_bytes * scale;
          task.kernel_passes |= kForwardPass;
        }
        for (const auto& input : graph.inputs(v)) {
          if (emitter.needs_gradient(input.op) && !input.edge.control) task.output_bytes += input.edge.bytes * scale;
        }
        for (TaskId end : previous_slot_ends[s]) task.deps.push_back(end);
        TaskId id = emitter.add(std::move(task));
        backward[m][v] = id;
        cell.push_back(id);
        if (run.recompute) {
          // Only the checkpoints a layer is recomputed from (received ones included) stay.
          for (const auto& input : graph.inputs(v)) {
            if (!emitter.selected(input.op) || input.edge.control || !crosses_layers(graph, input.op, v)) continue;
            emitter.at(*forward[m][input.op]).keep_until.push_back(id);
            auto received_input = received[m].find({input.op, s});
            if (received_input != received[m].end()) emitter.at(received_input->second).keep_until.push_back(id);
          }
          continue;
        }
        // This op's activation and its inputs (received ones included) live until this backward.
        emitter.at(*forward[m][v]).keep_until.push_back(id);
        for (const auto& input : graph.inputs(v)) {
          if (!emitter.selected(input.op) || input.edge.control) continue;
          emitter.at(*forward[m][input.op]).keep_until.push_back(id);
          auto received_input = received[m].find({input.op, s});
          if (received_input != received[m].end()) emitter.at(received_input->second).keep_until.push_back(id);
        }
      }
      return cell;
    };

    for (const auto& [s, slot] : emission_order(schedule, micro_batches)) {
      const int64_t m = slot.micro_batch;
      std::vector<TaskId> cell = slot.forward ? emit_forward(m, s) : emit_backward(m, s);
      if (cell.empty()) continue;
      // The next slot waits for this one through a free marker task (no kernel, no output), so
      // that ordering keeps no buffer alive longer than its data needs it.
      Task done;
      done.name = "mb" + std::to_string(m) + (slot.forward ? "/fwd-done/" : "/bwd-done/") + "stage" +
                  std::to_string(s) + suffix;
      done.phase = slot.forward ? Phase::kForward : Phase::kBackward;
      done.step = step;
      done.device = options.devices[s];
      done.op_kind = OpKind::kNoOp;
      done.deps = cell;
      previous_slot_ends[s] = {emitter.add(std::move(done))};
    }
    if (!training) continue;

    // Gradients accumulated over the micro-batches: one update per op with parameters.
    for (OpId v : emitter.order()) {
      const Op& op = graph.op(v);
      if (!emitter.selected(v) || op.parameter_count <= 0 || !backward[micro_batches - 1][v]) continue;
      // The last micro-batch's backward is the stage's last backward slot: the others are done.
      previous_update[v] =
          emitter.add(optimizer_task(op, optimizer_step(run), device_of(v), step, -1, *backward[micro_batches - 1][v]));
    }
  }
  return plan;
}

}  // namespace placesim
