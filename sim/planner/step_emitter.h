// StepEmitter: writes one replica's forward and backward tasks of one training (or inference)
// step into a plan — the part shared by single-replica plans (plan_builder) and data-parallel
// plans (data_parallel_builder). Cross-device tensors become transfers (once per destination),
// gradients flow back over the same edges, and backward work exists only on paths from
// parameters onwards.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"

namespace placesim {

struct ReplicaStep {
  std::vector<std::optional<TaskId>> forward;   ///< by OpId
  std::vector<std::optional<TaskId>> backward;  ///< by OpId; empty when not training
};

class StepEmitter {
 public:
  StepEmitter(const OpGraph& graph, const Cluster& cluster, const RunOptions& run, ExecutionPlan* plan);

  struct Inputs {
    int64_t step = 0;
    int64_t replica = -1;                                  ///< -1: not data parallel
    std::function<DeviceId(OpId)> device_of;               ///< where each op runs in this replica
    std::function<std::vector<TaskId>(OpId)> parameters_ready;  ///< extra deps of a parameter op's forward
    std::vector<TaskId> start_after;                       ///< deps of tasks that would have none
    double compute_scale = 1.0;                            ///< jitter/straggler factor for this replica-step
  };
  ReplicaStep emit(const Inputs& inputs);

  /// Appends a task (deps sorted and deduplicated) and returns its id.
  TaskId add(Task task);
  Task& at(TaskId id) { return plan_->tasks[id]; }
  /// Index of `transport` in the plan's table of transports (Task::transport), added once.
  int transport_index(const Transport& transport);
  /// The plan's transport at `index` (Task::transport).
  const Transport& transport(int index) const { return plan_->transports.at(static_cast<size_t>(index)); }
  TaskId transfer(const std::string& tensor, DeviceId from, DeviceId to, double bytes, std::vector<TaskId> deps,
                  int64_t step, int64_t replica, Phase phase);

  const std::vector<OpId>& order() const { return order_; }
  bool selected(OpId v) const { return selected_[v]; }
  bool needs_gradient(OpId v) const { return needs_gradient_[v]; }
  /// The backward kernels op v runs: the weights' gradient when it owns weights, and the input's
  /// gradient only when an input needs one (frameworks skip it for a layer on the model's input).
  uint8_t backward_kernel_passes(OpId v) const;
  bool training() const { return run_.kind == StepKind::kTraining; }
  StepKind step_kind() const { return run_.kind; }
  /// "r3/" for replica 3, "" otherwise; "#2" for step 2, "" for step 0.
  static std::string prefix(int64_t replica);
  static std::string suffix(int64_t step);

 private:
  const OpGraph& graph_;
  const Cluster& cluster_;
  const RunOptions& run_;
  ExecutionPlan* plan_;
  std::vector<OpId> order_;
  std::vector<bool> selected_;
  std::vector<bool> needs_gradient_;
};

/// An empty plan for `run`'s steps and precision on `cluster` (no tasks yet).
ExecutionPlan start_plan(const std::string& name, const RunOptions& run, const Cluster& cluster,
                         int64_t samples_per_step);

/// The compute task of `op`'s forward or backward pass on `device` in a step of `kind`, costs
/// multiplied by `scale` (1 / micro-batches for pipelines). An inference forward reads no batch
/// statistics (Op::inference_forward_bytes). A forward that launches no kernel (a variable, an
/// identity on a reference, a constant) allocates nothing: its output aliases storage counted
/// elsewhere. Name, deps and replica are the caller's.
Task op_compute_task(const Op& op, Phase phase, StepKind kind, DeviceId device, int64_t step, double scale = 1.0);

/// Seeded log-normal factor with mean 1 for (seed, replica, step): exp(sigma z - sigma^2 / 2),
/// z standard normal from a counter-based generator (identical on every platform and run).
double jitter_factor(uint64_t seed, int64_t replica, int64_t step, double sigma);

}  // namespace placesim
