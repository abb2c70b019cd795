#include "sim/plan/plan_builder.h"

#include <algorithm>
#include <map>
#include <optional>

namespace placesim {
namespace {

std::string step_suffix(int64_t step) { return step == 0 ? "" : "#" + std::to_string(step); }

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

class PlanWriter {
 public:
  explicit PlanWriter(ExecutionPlan* plan) : plan_(plan) {}

  TaskId add(Task task) {
    task.id = plan_->tasks.size();
    std::sort(task.deps.begin(), task.deps.end());
    task.deps.erase(std::unique(task.deps.begin(), task.deps.end()), task.deps.end());
    plan_->tasks.push_back(std::move(task));
    return plan_->tasks.back().id;
  }

  TaskId transfer(const std::string& tensor, DeviceId from, DeviceId to, double bytes, TaskId after, int64_t step,
                  const Cluster& cluster) {
    Task task;
    task.name = "xfer/" + tensor + ":" + cluster.device(from).name.local() + "->" + cluster.device(to).name.local() +
                step_suffix(step);
    task.kind = TaskKind::kTransfer;
    task.phase = Phase::kTransfer;
    task.step = step;
    task.op = tensor;
    task.source = from;
    task.device = to;
    task.bytes = bytes;
    task.output_bytes = bytes;
    task.deps = {after};
    return add(std::move(task));
  }

  Task& at(TaskId id) { return plan_->tasks[id]; }

 private:
  ExecutionPlan* plan_;
};

}  // namespace

OptimizerCost optimizer_cost(Optimizer optimizer, double dtype_bytes) {
  switch (optimizer) {
    case Optimizer::kSgd:  // w -= lr*g: read w, g; write w
      return {2, 3 * dtype_bytes, 0};
    case Optimizer::kMomentum:  // v = m*v + g; w -= lr*v: read w, g, v; write w, v
      return {4, 5 * dtype_bytes, 1};
    case Optimizer::kAdam:  // m, v moments, bias correction, sqrt, divide: read w, g, m, v; write w, m, v
      return {12, 7 * dtype_bytes, 2};
  }
  return {2, 3 * dtype_bytes, 0};
}

ExecutionPlan build_plan(const OpGraph& graph, const Placement& placement, const Cluster& cluster,
                         const RunOptions& run, const std::string& name) {
  ExecutionPlan plan;
  plan.name = name;
  plan.steps = run.steps;
  plan.samples_per_step = run.batch_size;
  plan.precision = run.precision;
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});

  std::vector<OpId> order;
  graph.topological_order(&order, nullptr);
  const std::vector<bool> selected = ops_in_step(graph, run.fetch);
  const bool training = run.kind == StepKind::kTraining;
  const std::vector<bool> needs_gradient = ops_needing_gradients(graph, order, selected);
  const OptimizerCost optimizer = optimizer_cost(run.optimizer, 4);
  auto device_of = [&](OpId v) { return placement.device_of_op[v]; };

  for (OpId v : order) {
    if (!selected[v]) continue;
    const Op& op = graph.op(v);
    StaticMemory& memory = plan.static_memory[device_of(v)];
    memory.parameter_bytes += op.parameter_bytes();
    if (training && op.parameter_count > 0) {
      memory.gradient_bytes += op.parameter_bytes();
      memory.optimizer_state_bytes += optimizer.state_copies * op.parameter_bytes();
    }
  }

  PlanWriter writer(&plan);
  std::vector<std::optional<TaskId>> previous_update(graph.size());
  // Inference steps are separate session runs: each starts when the previous one has ended.
  std::vector<TaskId> previous_step_ends;
  for (int64_t step = 0; step < run.steps; ++step) {
    const size_t first_task_of_step = plan.tasks.size();
    std::vector<std::optional<TaskId>> forward(graph.size());
    std::map<std::pair<OpId, DeviceId>, TaskId> sent;  // (producer, destination) -> transfer

    // Where op `u`'s output is available on device `to` (transferring it once if needed).
    auto forward_input = [&](OpId u, DeviceId to) -> TaskId {
      if (device_of(u) == to) return *forward[u];
      auto key = std::make_pair(u, to);
      auto it = sent.find(key);
      if (it != sent.end()) return it->second;
      TaskId id = writer.transfer(graph.op(u).name, device_of(u), to, graph.op(u).output_bytes, *forward[u], step,
                                  cluster);
      sent.emplace(key, id);
      return id;
    };

    for (OpId v : order) {
      if (!selected[v]) continue;
      const Op& op = graph.op(v);
      Task task;
      task.name = "fwd/" + op.name + step_suffix(step);
      task.phase = Phase::kForward;
      task.step = step;
      task.op = op.name;
      task.device = device_of(v);
      task.op_kind = op.kind;
      task.flops = op.forward_flops;
      task.memory_bytes = op.forward_bytes;
      // An op that launches no kernel (a variable, an identity on a reference, a constant)
      // allocates nothing: its output aliases storage counted elsewhere.
      task.output_bytes = (op.forward_flops > 0 || op.forward_bytes > 0) ? op.output_bytes : 0;
      for (const auto& input : graph.inputs(v)) {
        if (!selected[input.op]) continue;
        if (input.edge.control) {
          task.deps.push_back(*forward[input.op]);  // control edges carry no data: no transfer
        } else {
          task.deps.push_back(forward_input(input.op, task.device));
        }
      }
      if (previous_update[v]) task.deps.push_back(*previous_update[v]);
      if (task.deps.empty()) task.deps = previous_step_ends;
      forward[v] = writer.add(std::move(task));
    }
    if (!training) {
      previous_step_ends.clear();
      std::vector<bool> has_successor(plan.tasks.size(), false);
      for (size_t id = first_task_of_step; id < plan.tasks.size(); ++id) {
        for (TaskId dep : plan.tasks[id].deps) has_successor[dep] = true;
      }
      for (size_t id = first_task_of_step; id < plan.tasks.size(); ++id) {
        if (!has_successor[id]) previous_step_ends.push_back(id);
      }
      continue;
    }

    // Backward: reverse topological order; an op's backward needs its consumers' gradients.
    std::vector<std::optional<TaskId>> backward(graph.size());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      OpId v = *it;
      const Op& op = graph.op(v);
      if (!needs_gradient[v]) continue;
      Task task;
      task.name = "bwd/" + op.name + step_suffix(step);
      task.phase = Phase::kBackward;
      task.step = step;
      task.op = op.name;
      task.device = device_of(v);
      task.op_kind = op.kind;
      task.flops = op.backward_flops;
      task.memory_bytes = op.backward_bytes;
      task.deps.push_back(*forward[v]);
      for (const auto& output : graph.outputs(v)) {
        OpId consumer = output.op;
        if (!selected[consumer] || output.edge.control || !backward[consumer]) continue;
        if (device_of(consumer) == task.device) {
          task.deps.push_back(*backward[consumer]);
        } else {
          task.deps.push_back(writer.transfer("grad/" + op.name, device_of(consumer), task.device, output.edge.bytes,
                                              *backward[consumer], step, cluster));
        }
      }
      // The gradients w.r.t. this op's inputs are what it produces.
      for (const auto& input : graph.inputs(v)) {
        if (needs_gradient[input.op] && !input.edge.control) task.output_bytes += input.edge.bytes;
      }
      backward[v] = writer.add(std::move(task));
      // Forward activations of this op and of its inputs stay alive until this backward ends.
      writer.at(*forward[v]).keep_until.push_back(*backward[v]);
      for (const auto& input : graph.inputs(v)) {
        if (selected[input.op] && !input.edge.control) writer.at(*forward[input.op]).keep_until.push_back(*backward[v]);
      }
    }

    for (OpId v : order) {
      const Op& op = graph.op(v);
      if (!selected[v] || op.parameter_count <= 0 || !backward[v]) continue;
      const OptimizerCost cost = optimizer_cost(run.optimizer, op.dtype_bytes);
      Task task;
      task.name = "opt/" + op.name + step_suffix(step);
      task.phase = Phase::kOptimizer;
      task.step = step;
      task.op = op.name;
      task.device = device_of(v);
      task.op_kind = OpKind::kOptimizer;
      task.flops = cost.flops_per_parameter * op.parameter_count;
      task.memory_bytes = cost.bytes_per_parameter * op.parameter_count;
      task.deps.push_back(*backward[v]);
      previous_update[v] = writer.add(std::move(task));
    }
  }
  return plan;
}

}  // namespace placesim
