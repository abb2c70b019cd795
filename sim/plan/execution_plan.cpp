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

SuccessorLists::SuccessorLists(const std::vector<Task>& tasks) : offsets_(tasks.size() + 1, 0) {
  for (const Task& task : tasks) {
    for (TaskId dep : task.deps) ++offsets_[dep + 1];
  }
  for (size_t i = 1; i < offsets_.size(); ++i) offsets_[i] += offsets_[i - 1];
  flat_.resize(offsets_.back());
  std::vector<size_t> next(offsets_.begin(), offsets_.end() - 1);
  for (const Task& task : tasks) {
    for (TaskId dep : task.deps) flat_[next[dep]++] = task.id;
  }
}

}  // namespace placesim
