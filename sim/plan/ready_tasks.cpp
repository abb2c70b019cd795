#include "sim/plan/ready_tasks.h"

#include <stdexcept>
#include <string>

namespace placesim {

ReadyTasks::ReadyTasks(const ExecutionPlan& plan, size_t device_count, const std::vector<bool>* handled,
                       const SuccessorLists* successors)
    : plan_(plan),
      handled_(handled),
      own_successors_(successors ? SuccessorLists() : plan.successors()),
      successors_(successors ? successors : &own_successors_),
      unfinished_deps_(plan.tasks.size(), 0),
      ready_compute_(device_count),
      busy_(device_count, false) {
  if (handled_ && handled_->size() != plan.tasks.size()) {
    throw std::logic_error("ready tasks: " + std::to_string(handled_->size()) + " flags for a plan of " +
                           std::to_string(plan.tasks.size()) + " tasks");
  }
  if (successors_->size() != plan.tasks.size()) {
    throw std::logic_error("ready tasks: successor lists of " + std::to_string(successors_->size()) +
                           " tasks for a plan of " + std::to_string(plan.tasks.size()));
  }
  for (const Task& task : plan.tasks) handled_count_ += handles(task.id);
  restart();
}

void ReadyTasks::restart() {
  for (const Task& task : plan_.tasks) {
    unfinished_deps_[task.id] = 0;
    if (!handles(task.id)) continue;
    for (TaskId dep : task.deps) unfinished_deps_[task.id] += handles(dep);
  }
  for (auto& queue : ready_compute_) queue = {};
  busy_.assign(busy_.size(), false);
  completed_ = 0;
}

std::vector<TaskId> ReadyTasks::initially_ready() const {
  std::vector<TaskId> ready;
  for (TaskId id = 0; id < plan_.tasks.size(); ++id) {
    if (handles(id) && unfinished_deps_[id] == 0) ready.push_back(id);
  }
  return ready;
}

}  // namespace placesim
