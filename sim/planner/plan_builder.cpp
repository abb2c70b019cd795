#include "sim/planner/plan_builder.h"

#include "sim/planner/memory_model.h"
#include "sim/planner/step_emitter.h"

namespace placesim {

OptimizerCost optimizer_cost(Optimizer optimizer, double dtype_bytes) {
  // In mixed precision (elements under 4 bytes) the update works on fp32 master weights and
  // moments (Micikevicius et al. 2018): it reads the low-precision gradient, reads and writes the
  // fp32 master and moments, and writes the model's low-precision copy of the weights; PyTorch AMP,
  // whose parameters and gradients stay fp32, moves the same bytes for SGD, momentum and Adam.
  const bool mixed = dtype_bytes < 4;
  const double master_bytes = 4;
  switch (optimizer) {
    case Optimizer::kSgd:  // w -= lr*g: read w, g; write w
      return {2, mixed ? 2 * master_bytes + 2 * dtype_bytes : 3 * dtype_bytes, 0};
    case Optimizer::kMomentum:  // v = m*v + g; w -= lr*v: read w, g, v; write w, v
      return {4, mixed ? 4 * master_bytes + 2 * dtype_bytes : 5 * dtype_bytes, 1};
    case Optimizer::kAdam:  // m, v moments, bias correction, sqrt, divide: read w, g, m, v; write w, m, v
      return {12, mixed ? 6 * master_bytes + 2 * dtype_bytes : 7 * dtype_bytes, 2};
    case Optimizer::kLamb:
      // LAMB (You et al. 2020, algorithm 2) as NVIDIA's fused kernels run it (DeepLearningExamples
      // BERT, lamb_amp_opt/csrc/multi_tensor_lamb.cu, 21.11): a global gradient norm, then per
      // tensor the weights' norm, stage 1 (read g, w, m, v; write m, v and the update u), the
      // update's norm and stage 2 (read u, w; write w): 13 passes of a parameter-sized buffer in
      // fp32. In fp16 the weights, m and v are fp32 copies (master weights) and g, u are fp16, with
      // GradScaler's inf check (read and write g) first and the fp16 weights written last:
      // 8 fp16 passes + 8 fp32 ones = 48 bytes per parameter. FLOPs: Adam's 12 + 3 norms (2 each)
      // + the trust-ratio scaling (2).
      if (dtype_bytes >= 4) return {20, 13 * dtype_bytes, 2};
      return {20, 8 * dtype_bytes + 8 * 4, 2};
  }
  return {2, 3 * dtype_bytes, 0};
}

Task optimizer_task(const Op& op, Optimizer optimizer, DeviceId device, int64_t step, int64_t replica, TaskId after) {
  const OptimizerCost cost = optimizer_cost(optimizer, op.dtype_bytes);
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
      previous_update[v] = emitter.add(optimizer_task(op, run.optimizer, device_of(v), step, -1, *emitted.backward[v]));
    }
  }
  return plan;
}

}  // namespace placesim
