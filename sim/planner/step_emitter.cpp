#include "sim/planner/step_emitter.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/graph/backward_reads.h"
#include "sim/planner/framework_transports.h"
#include "sim/planner/memory_model.h"

namespace placesim {
namespace {

/// Ops the step evaluates: ancestors of the fetched ops, or every op.
std::vector<bool> ops_in_step(const OpGraph& graph, const std::vector<std::string>& fetch) {
  std::vector<bool> selected(graph.size(), fetch.empty());
  std::vector<OpId> stack;
  for (const auto& name : fetch) stack.push_back(graph.find(name));
  while (!stack.empty()) {
    OpId v = stack.back();
    stack.pop_back();
    if (selected[v]) continue;
    selected[v] = true;
    for (const auto& input : graph.inputs(v)) stack.push_back(input.op);
  }
  return selected;
}

/// Ops whose gradient someone needs: those with parameters and everything downstream of them.
/// Inputs and labels upstream of every parameter get no backward work (as in TensorFlow, where
/// gradients are only computed on paths to trainable variables).
std::vector<bool> ops_needing_gradients(const OpGraph& graph, const std::vector<OpId>& order,
                                        const std::vector<bool>& selected) {
  std::vector<bool> needed(graph.size(), false);
  for (OpId v : order) {
    if (!selected[v] || graph.op(v).kind == OpKind::kNoOp) continue;
    needed[v] = graph.op(v).parameter_count > 0;
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && needed[input.op]) needed[v] = true;
    }
  }
  return needed;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double unit_interval(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) / 9007199254740992.0; }

}  // namespace

double jitter_factor(uint64_t seed, int64_t replica, int64_t step, double sigma) {
  if (sigma <= 0) return 1.0;
  uint64_t key = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(replica + 1) * 0x100000001b3ULL ^
                                               splitmix64(static_cast<uint64_t>(step))));
  double u1 = unit_interval(splitmix64(key));
  double u2 = unit_interval(splitmix64(key + 1));
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);  // Box-Muller
  return std::exp(sigma * z - sigma * sigma / 2);
}

ExecutionPlan start_plan(const std::string& name, const RunOptions& run, const Cluster& cluster,
                         int64_t samples_per_step) {
  ExecutionPlan plan;
  plan.name = name;
  plan.steps = run.steps;
  plan.samples_per_step = samples_per_step;
  plan.precision = run.precision;
  plan.memory_format = run.memory_format;
  plan.collective_fidelity = run.collective_fidelity;
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});
  return plan;
}

Task op_compute_task(const Op& op, Phase phase, StepKind kind, DeviceId device, int64_t step, double scale) {
  const bool forward = phase == Phase::kForward;
  const double forward_bytes = kind == StepKind::kTraining ? op.forward_bytes : op.inference_forward_bytes();
  Task task;
  task.phase = phase;
  task.step = step;
  task.op = op.name;
  task.device = device;
  task.op_kind = op.kind;
  task.flops = (forward ? op.forward_flops : op.backward_flops) * scale;
  task.memory_bytes = (forward ? forward_bytes : op.backward_bytes) * scale;
  if (forward && (op.forward_flops > 0 || op.forward_bytes > 0)) task.output_bytes = op.output_bytes * scale;
  if (op.kernel) {
    task.kernel = op.kernel;
    task.kernel_passes = forward ? static_cast<uint8_t>(kForwardPass) : kBackwardPasses;
    task.kernel_samples = scale;
  }
  return task;
}

StepEmitter::StepEmitter(const OpGraph& graph, const Cluster& cluster, const RunOptions& run, ExecutionPlan* plan)
    : graph_(graph), cluster_(cluster), run_(run), plan_(plan) {
  graph.topological_order(&order_, nullptr);
  selected_ = ops_in_step(graph, run.fetch);
  needs_gradient_ = ops_needing_gradients(graph, order_, selected_);
}

uint8_t StepEmitter::backward_kernel_passes(OpId v) const {
  bool input_needs_gradient = false;
  for (const auto& input : graph_.inputs(v)) {
    if (!input.edge.control && needs_gradient_[input.op]) input_needs_gradient = true;
  }
  const Op& op = graph_.op(v);
  // Without weights of its own (attention's batched GEMMs), both operands are inputs.
  if (op.parameter_count <= 0) return input_needs_gradient ? kBackwardPasses : 0;
  return kBackwardFilterPass | (input_needs_gradient ? kBackwardDataPass : 0);
}

std::string StepEmitter::prefix(int64_t replica) { return replica < 0 ? "" : "r" + std::to_string(replica) + "/"; }
std::string StepEmitter::suffix(int64_t step) { return step == 0 ? "" : "#" + std::to_string(step); }

int StepEmitter::transport_index(const Transport& transport) { return plan_transport_index(plan_, transport); }

TaskId StepEmitter::add(Task task) {
  task.id = plan_->tasks.size();
  std::sort(task.deps.begin(), task.deps.end());
  task.deps.erase(std::unique(task.deps.begin(), task.deps.end()), task.deps.end());
  plan_->tasks.push_back(std::move(task));
  return plan_->tasks.back().id;
}

TaskId StepEmitter::transfer(const std::string& tensor, DeviceId from, DeviceId to, double bytes,
                             std::vector<TaskId> deps, int64_t step, int64_t replica, Phase phase) {
  Task task;
  const auto& source = cluster_.device(from).name;
  const auto& destination = cluster_.device(to).name;
  // Local names ("GPU:0") inside one machine; task-qualified across machines.
  bool same_node = cluster_.device(from).node == cluster_.device(to).node;
  std::string from_name = same_node ? source.local() : "task:" + std::to_string(source.task.value_or(0)) + "/" + source.local();
  std::string to_name =
      same_node ? destination.local() : "task:" + std::to_string(destination.task.value_or(0)) + "/" + destination.local();
  std::string verb = phase == Phase::kPush ? "push/" : phase == Phase::kPull ? "pull/" : "xfer/";
  task.name = prefix(replica) + verb + tensor + ":" + from_name + "->" + to_name + suffix(step);
  task.kind = TaskKind::kTransfer;
  task.phase = phase;
  task.step = step;
  task.replica = replica;
  task.op = tensor;
  task.source = from;
  task.device = to;
  task.bytes = bytes;
  task.output_bytes = bytes;
  task.deps = std::move(deps);
  return add(std::move(task));
}

ReplicaStep StepEmitter::emit(const Inputs& in) {
  ReplicaStep result;
  result.forward.resize(graph_.size());
  std::map<std::pair<OpId, DeviceId>, TaskId> sent;  // (producer, destination) -> transfer

  // Where op `u`'s output is available on device `to` (transferring it once if needed).
  auto forward_input = [&](OpId u, DeviceId to) -> TaskId {
    if (in.device_of(u) == to) return *result.forward[u];
    auto key = std::make_pair(u, to);
    auto it = sent.find(key);
    if (it != sent.end()) return it->second;
    TaskId id = transfer(graph_.op(u).name, in.device_of(u), to, graph_.op(u).output_bytes, {*result.forward[u]},
                         in.step, in.replica, Phase::kTransfer);
    sent.emplace(key, id);
    return id;
  };

  for (OpId v : order_) {
    if (!selected_[v]) continue;
    const Op& op = graph_.op(v);
    Task task = op_compute_task(op, Phase::kForward, run_.kind, in.device_of(v), in.step);
    task.name = prefix(in.replica) + "fwd/" + op.name + suffix(in.step);
    task.replica = in.replica;
    task.compute_scale = in.compute_scale;
    for (const auto& input : graph_.inputs(v)) {
      if (!selected_[input.op]) continue;
      if (input.edge.control) {
        task.deps.push_back(*result.forward[input.op]);  // control edges carry no data: no transfer
      } else {
        task.deps.push_back(forward_input(input.op, task.device));
      }
    }
    if (op.parameter_count > 0 && in.parameters_ready) {
      for (TaskId dep : in.parameters_ready(v)) task.deps.push_back(dep);
    }
    if (task.deps.empty()) task.deps = in.start_after;
    result.forward[v] = add(std::move(task));
  }
  if (!training()) return result;

  // Backward: reverse topological order; an op's backward needs its consumers' gradients.
  result.backward.resize(graph_.size());
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    OpId v = *it;
    const Op& op = graph_.op(v);
    if (!needs_gradient_[v]) continue;
    Task task = op_compute_task(op, Phase::kBackward, run_.kind, in.device_of(v), in.step);
    if (task.kernel) task.kernel_passes = backward_kernel_passes(v);
    task.name = prefix(in.replica) + "bwd/" + op.name + suffix(in.step);
    task.replica = in.replica;
    task.compute_scale = in.compute_scale;
    bool waits_for_gradient = false;
    for (const auto& output : graph_.outputs(v)) {
      if (selected_[output.op] && !output.edge.control && result.backward[output.op]) waits_for_gradient = true;
    }
    // With recomputation the forward output is not kept: the backward re-runs the forward
    // (its cost and output) and follows forward only through the consumers' gradients.
    // What the gradient reads stays alive until it runs; a backward that reads not its own
    // output follows its forward only through the consumers' gradients (the same order).
    const BackwardReads reads = backward_reads(op.type);
    if (!waits_for_gradient || (!run_.recompute && reads.output)) task.deps.push_back(*result.forward[v]);
    if (run_.recompute) {
      task.flops += op.forward_flops;
      task.memory_bytes += op.forward_bytes;  // the recomputed activation is the kernel's temporary
      task.kernel_passes |= kForwardPass;
    }
    for (const auto& output : graph_.outputs(v)) {
      OpId consumer = output.op;
      if (!selected_[consumer] || output.edge.control || !result.backward[consumer]) continue;
      if (in.device_of(consumer) == task.device) {
        task.deps.push_back(*result.backward[consumer]);
      } else {
        task.deps.push_back(transfer("grad/" + op.name, in.device_of(consumer), task.device, output.edge.bytes,
                                     {*result.backward[consumer]}, in.step, in.replica, Phase::kTransfer));
      }
    }
    // The gradients w.r.t. this op's inputs are what it produces.
    for (const auto& input : graph_.inputs(v)) {
      if (needs_gradient_[input.op] && !input.edge.control) task.output_bytes += input.edge.bytes;
    }
    result.backward[v] = add(std::move(task));
    if (run_.recompute) {
      // Only the checkpoints a layer is recomputed from stay until this backward.
      for (const auto& input : graph_.inputs(v)) {
        if (selected_[input.op] && !input.edge.control && crosses_layers(graph_, input.op, v)) {
          at(*result.forward[input.op]).keep_until.push_back(*result.backward[v]);
        }
      }
      continue;
    }
    // The forward activations this backward reads (its output, its inputs) stay alive until it ends.
    if (reads.output) at(*result.forward[v]).keep_until.push_back(*result.backward[v]);
    for (const auto& input : graph_.inputs(v)) {
      if (reads.inputs && selected_[input.op] && !input.edge.control) {
        at(*result.forward[input.op]).keep_until.push_back(*result.backward[v]);
      }
    }
  }
  return result;
}

}  // namespace placesim
