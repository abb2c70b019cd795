#include "sim/plan/execution_plan.h"

namespace placesim {

std::string to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::kCompute: return "compute";
    case TaskKind::kTransfer: return "transfer";
    case TaskKind::kCollective: return "collective";
  }
  return "compute";
}

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kTransfer: return "transfer";
    case Phase::kCollective: return "collective";
    case Phase::kPush: return "push";
    case Phase::kPull: return "pull";
    case Phase::kApply: return "apply";
  }
  return "forward";
}

std::vector<std::vector<TaskId>> ExecutionPlan::successors() const {
  std::vector<std::vector<TaskId>> result(tasks.size());
  for (const Task& task : tasks) {
    for (TaskId dep : task.deps) result[dep].push_back(task.id);
  }
  return result;
}

}  // namespace placesim
