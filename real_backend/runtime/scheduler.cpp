#include "real_backend/runtime/scheduler.h"

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>

#include "sim/plan/ready_tasks.h"

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
  ReadyTasks ready(plan, device_count, runs_here);
  std::vector<TaskId> ready_transfers;
  auto make_ready = [&](TaskId id) {
    if (plan.tasks[id].kind == TaskKind::kCompute) ready.queue_compute(id);
    else ready_transfers.push_back(id);
  };
  for (TaskId id : ready.initially_ready()) make_ready(id);
  const size_t handled = ready.handled_count();

  CompletionQueue done;
  const double origin = monotonic_seconds();
  launcher.begin_run(origin);
  size_t in_flight = 0;
  auto complete = [&](TaskId id, double end_seconds) {
    timeline.tasks[id].end_seconds = end_seconds;
    ready.complete(id, make_ready);
  };

  while (ready.completed() < handled) {
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
        const std::optional<TaskId> next = ready.next_compute(device);
        if (!next) continue;
        const TaskId id = *next;
        double start = monotonic_seconds() - origin;
        timeline.tasks[id].start_seconds = start;
        if (launcher.is_empty(plan.tasks[id])) {
          complete(id, start);
        } else {
          ready.set_busy(device, true);
          launcher.start_compute(plan.tasks[id], done);
          ++in_flight;
        }
        progress = true;
      }
    }
    if (ready.completed() == handled) break;
    if (in_flight == 0) throw std::runtime_error("execution stalled: the plan's dependencies contain a cycle");
    Completion completion = done.pop();
    --in_flight;
    const Task& task = plan.tasks.at(completion.task);
    if (task.kind == TaskKind::kCompute) ready.set_busy(task.device, false);
    complete(completion.task, completion.end_seconds);
  }
  launcher.finish_run(timeline);
  return timeline;
}

}  // namespace placesim::real
