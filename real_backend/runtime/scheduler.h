// The dispatch loop every executor shares. It walks an ExecutionPlan in the PlanEngine contract
// (sim/engine/engine.h): a task is dispatched only after all its deps have completed; each
// device runs one compute task at a time, the ready task with the lowest id first; transfers
// are dispatched as soon as they are ready and run concurrently (the rule itself: ReadyTasks,
// sim/plan/ready_tasks.h, shared with the simulators). What a task *does* is up to a
// TaskLauncher (CUDA streams); the loop only decides when.
//
// Thread-safety: run_plan_once runs on the calling thread; launchers report completions from
// any thread through the CompletionQueue, which is the only shared state.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim::real {

/// Seconds on a monotonic clock (std::chrono::steady_clock).
double monotonic_seconds();

/// A completed task, reported by a launcher: its interval on the run's clock (seconds since the
/// run's origin). A launcher that cannot time a task on the host (CUDA: events, resolved after
/// the run) reports NaN and fills the interval in TaskLauncher::finish_run.
struct Completion {
  TaskId task = 0;
  double end_seconds = 0;
};

/// Many producers (worker threads, CUDA host callbacks), one consumer (the dispatch loop).
class CompletionQueue {
 public:
  void push(Completion completion);
  Completion pop();  ///< blocks until a completion is available

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Completion> completions_;
};

/// Runs tasks on real resources. start_* must not block on the task's work: it hands the task
/// to a thread or a stream, which later pushes a Completion.
class TaskLauncher {
 public:
  virtual ~TaskLauncher() = default;
  /// Called once before the first task with the run's origin on monotonic_seconds()'s clock.
  virtual void begin_run(double origin_seconds) = 0;
  /// True when the task does no work (no FLOPs, no bytes): it completes at once, like the
  /// SimGrid engine's zero-cost tasks.
  virtual bool is_empty(const Task& task) const = 0;
  virtual void start_compute(const Task& task, CompletionQueue& done) = 0;
  virtual void start_transfer(const Task& task, CompletionQueue& done) = 0;
  /// Called after every task completed; may overwrite intervals (device-side timestamps).
  virtual void finish_run(Timeline& timeline) = 0;
};

/// Executes the plan once and returns its timeline: start = when the loop dispatched the task,
/// end = when its launcher says it finished, both in seconds from the run's origin.
/// `runs_here` (a plan over several hosts: this host's part) limits the run to the tasks it marks:
/// the others are never dispatched, keep an empty interval, and do not hold back their
/// successors here (another host runs them; a message carries the dependency). Null = all.
Timeline run_plan_once(const ExecutionPlan& plan, size_t device_count, TaskLauncher& launcher,
                       const std::string& source, const std::vector<bool>* runs_here = nullptr);

}  // namespace placesim::real
