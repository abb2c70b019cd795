#include "sim/planner/plan_builder.h"

#include "sim/planner/memory_model.h"
#include "sim/planner/step_emitter.h"

namespace placesim {

Task optimizer_task(const Op& op, const OptimizerStep& optimizer, DeviceId device, int64_t step, int64_t replica, TaskId after) {
  const OptimizerCost cost = optimizer_step_cost(optimizer, op.dtype_bytes);
  Task task;
  task.name = StepEmitter::prefix(replica) + "opt/" + op.name + StepEmitter::suffix(step);
  task.phase = Phase::kOptimizer;
  task.step = step;
  task.replica = replica;
  task.op = op.name;
  task.device = device;
  task.op_kind = OpKind::kOptimizer;
  task.flops = cost.flops_per_parameter * op.parameter_count;
  task.memory_bytes = cost.bytes_per_parameter * op.parameter_count;
  task.deps = {after};
  task.reads_dep_outputs = false;  // the weights, gradients and optimizer state: static memory
  return task;
}

ExecutionPlan build_plan(const OpGraph& graph, const Placement& placement, const Cluster& cluster,
                         const RunOptions& run, const std::string& name) {
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size);

  StepEmitter emitter(graph, cluster, run, &plan);
  auto device_of = [&](OpId v) { return placement.device_of_op[v]; };
  for (OpId v : emitter.order()) {
    if (!emitter.selected(v)) continue;
    add_static_memory(&plan.static_memory[device_of(v)], op_static_memory(graph.op(v), run));
  }

  std::vector<std::optional<TaskId>> previous_update(graph.size());
  // Inference steps are separate session runs: each starts when the previous one has ended.
  std::vector<TaskId> previous_step_ends;
  for (int64_t step = 0; step < run.steps; ++step) {
    const size_t first_task_of_step = plan.tasks.size();
    StepEmitter::Inputs inputs;
    inputs.step = step;
    inputs.device_of = device_of;
    inputs.parameters_ready = [&](OpId v) {
      return previous_update[v] ? std::vector<TaskId>{*previous_update[v]} : std::vector<TaskId>{};
    };
    inputs.start_after = previous_step_ends;
    inputs.compute_scale = jitter_factor(run.seed, 0, step, run.jitter_sigma);
    ReplicaStep emitted = emitter.emit(inputs);
    if (!emitter.training()) {
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
    for (OpId v : emitter.order()) {
      const Op& op = graph.op(v);
      if (!emitter.selected(v) || op.parameter_count <= 0 || !emitted.backward[v]) continue;
      previous_update[v] = emitter.add(optimizer_task(op, optimizer_step(run), device_of(v), step, -1, *emitted.backward[v]));
    }
  }
  return plan;
}

}  // namespace placesim
