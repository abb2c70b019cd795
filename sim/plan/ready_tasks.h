// ReadyTasks: the dispatch rule of the PlanEngine contract (sim/engine/engine.h), written once for
// the SimGrid engine, the analytical tier, the real backend's dispatch loop and the CPU executor
// (under its own lock: ReadyTasks is not thread-safe): a task becomes ready when its last
// dependency completes; a device runs one compute task at a time, the ready one with the lowest id
// first. What "running" a task means, and when it ends, stays with them.
#pragma once

#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "sim/plan/execution_plan.h"

namespace placesim {

class ReadyTasks {
 public:
  /// `handled`: the tasks this run handles (a multi-host plan's part on this host), one flag per
  /// task; a dependency outside it never holds a task back. Null: every task. `successors`: the plan's
  /// (ExecutionPlan::successors), for a caller that schedules one plan several times and builds
  /// them once; it must outlive this. Null: built here.
  ReadyTasks(const ExecutionPlan& plan, size_t device_count, const std::vector<bool>* handled = nullptr,
             const SuccessorLists* successors = nullptr);
  // It may point at its own successor lists: not copied or moved.
  ReadyTasks(const ReadyTasks&) = delete;
  ReadyTasks& operator=(const ReadyTasks&) = delete;

  /// Forgets every completion, queued task and busy device: the state before a run, for a
  /// backend that runs one plan many times.
  void restart();

  /// The handled tasks with no handled dependency, in id order: ready at the start.
  std::vector<TaskId> initially_ready() const;
  /// Marks `id` completed and calls on_ready(next) for each handled successor whose last
  /// dependency it was, in the plan's successor order.
  template <typename OnReady>
  void complete(TaskId id, OnReady&& on_ready) {
    ++completed_;
    for (TaskId next : (*successors_)[id]) {
      if (handles(next) && --unfinished_deps_[next] == 0) on_ready(next);
    }
  }

  /// Queues a ready compute task on its device.
  void queue_compute(TaskId id) { ready_compute_[plan_.tasks[id].device].push(id); }
  /// Takes the lowest queued compute task of `device` when the device is idle; nullopt when it is
  /// busy or has none ready.
  std::optional<TaskId> next_compute(DeviceId device) {
    if (busy_[device] || ready_compute_[device].empty()) return std::nullopt;
    const TaskId id = ready_compute_[device].top();
    ready_compute_[device].pop();
    return id;
  }
  /// A device holding a compute task runs nothing else until it is set idle again.
  void set_busy(DeviceId device, bool busy) { busy_[device] = busy; }

  bool handles(TaskId id) const { return !handled_ || (*handled_)[id]; }
  size_t handled_count() const { return handled_count_; }
  size_t completed() const { return completed_; }

 private:
  const ExecutionPlan& plan_;
  const std::vector<bool>* handled_;
  SuccessorLists own_successors_;     ///< when the caller gives none
  const SuccessorLists* successors_;  ///< own_successors_ or the caller's
  std::vector<size_t> unfinished_deps_;
  std::vector<std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>>> ready_compute_;
  std::vector<bool> busy_;
  size_t handled_count_ = 0;
  size_t completed_ = 0;
};

}  // namespace placesim
