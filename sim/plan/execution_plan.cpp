#include "sim/plan/execution_plan.h"

namespace placesim {

std::string to_string(TaskKind kind) { return kind == TaskKind::kCompute ? "compute" : "transfer"; }

std::string to_string(Phase phase) {
  switch (phase) {
    case Phase::kForward: return "forward";
    case Phase::kBackward: return "backward";
    case Phase::kOptimizer: return "optimizer";
    case Phase::kTransfer: return "transfer";
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
