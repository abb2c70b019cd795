#include "real_backend/runtime/scheduler.h"

#include <chrono>
#include <functional>
#include <queue>
#include <stdexcept>

namespace placesim::real {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void CompletionQueue::push(Completion completion) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completions_.push_back(completion);
  }
  ready_.notify_one();
}

Completion CompletionQueue::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [this] { return !completions_.empty(); });
  Completion completion = completions_.front();
  completions_.pop_front();
  return completion;
}

Timeline run_plan_once(const ExecutionPlan& plan, size_t device_count, TaskLauncher& launcher,
                       const std::string& source, const std::vector<bool>* runs_here) {
  const size_t n = plan.tasks.size();
  Timeline timeline;
  timeline.source = source;
  timeline.tasks.resize(n);
  SuccessorLists successors = plan.successors();
  std::vector<size_t> unfinished_deps(n);
  using MinHeap = std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>>;
  std::vector<MinHeap> ready_compute(device_count);
  std::vector<bool> device_busy(device_count, false);
  std::vector<TaskId> ready_transfers;

  auto make_ready = [&](TaskId id) {
    const Task& task = plan.tasks[id];
    if (task.kind == TaskKind::kCompute) ready_compute.at(task.device).push(id);
    else ready_transfers.push_back(id);
  };
  auto here = [runs_here](TaskId id) { return !runs_here || (*runs_here)[id]; };
  size_t handled = 0;
  for (TaskId id = 0; id < n; ++id) {
    if (!here(id)) continue;
    ++handled;
    unfinished_deps[id] = 0;
    for (TaskId dep : plan.tasks[id].deps) unfinished_deps[id] += here(dep);
    if (unfinished_deps[id] == 0) make_ready(id);
  }

  CompletionQueue done;
  const double origin = monotonic_seconds();
  launcher.begin_run(origin);
  size_t finished = 0, in_flight = 0;
  auto complete = [&](TaskId id, double end_seconds) {
    timeline.tasks[id].end_seconds = end_seconds;
    ++finished;
    for (TaskId next : successors[id]) {
      if (here(next) && --unfinished_deps[next] == 0) make_ready(next);
    }
  };

  while (finished < handled) {
    // Dispatch everything that can start now; empty tasks complete at once and may make more
    // tasks ready, hence the loop.
    for (bool progress = true; progress;) {
      progress = false;
      while (!ready_transfers.empty()) {
        TaskId id = ready_transfers.back();
        ready_transfers.pop_back();
        double start = monotonic_seconds() - origin;
        timeline.tasks[id].start_seconds = start;
        if (launcher.is_empty(plan.tasks[id])) {
          complete(id, start);
        } else {
          launcher.start_transfer(plan.tasks[id], done);
          ++in_flight;
        }
        progress = true;
      }
      for (size_t device = 0; device < device_count; ++device) {
        if (device_busy[device] || ready_compute[device].empty()) continue;
        TaskId id = ready_compute[device].top();
        ready_compute[device].pop();
        double start = monotonic_seconds() - origin;
        timeline.tasks[id].start_seconds = start;
        if (launcher.is_empty(plan.tasks[id])) {
          complete(id, start);
        } else {
          device_busy[device] = true;
          launcher.start_compute(plan.tasks[id], done);
          ++in_flight;
        }
        progress = true;
      }
    }
    if (finished == handled) break;
    if (in_flight == 0) throw std::runtime_error("execution stalled: the plan's dependencies contain a cycle");
    Completion completion = done.pop();
    --in_flight;
    const Task& task = plan.tasks.at(completion.task);
    if (task.kind == TaskKind::kCompute) device_busy[task.device] = false;
    complete(completion.task, completion.end_seconds);
  }
  launcher.finish_run(timeline);
  return timeline;
}

}  // namespace placesim::real
