// Executor: a PlanEngine that runs the plan on this machine's devices instead of predicting it,
// and returns a measured Timeline ("measured/cpu", "measured/cuda") under the same contract as
// the SimGrid engine (sim/engine/engine.h): a task starts after its deps end; one compute task
// at a time per device, the ready task with the lowest id first; transfers run concurrently.
//
// simulate() measures: it checks that this machine can run the plan, prepares buffers and
// threads, runs `warmup_runs` untimed executions, then `timed_runs` timed ones, and returns the
// per-task median start and end offsets (see median_timeline). An Executor is not thread-safe;
// one plan runs at a time. The executors (real_backend/cpu, real_backend/cuda) implement it;
// real_backend/executor_factory.h picks one for a backend.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/quantile.h"
#include "sim/engine/engine.h"

namespace placesim::real {

/// How the CUDA executor issues a plan's GPU work.
enum class GpuDispatch {
  kAhead,  ///< enqueue every task ahead with stream/event dependencies (when the plan allows)
  kLoop,   ///< dispatch each task when its deps have finished (host callback per task)
};

struct ExecutionOptions {
  int warmup_runs = 2;
  int timed_runs = 7;  ///< odd, so that each median is one measured value
  bool pin_threads = true;
  /// CUDA: when the plan names more GPUs than the machine has, plan GPU k runs on CUDA device
  /// k mod count, each plan GPU with its own compute stream (e.g. a 2-stream split on one GPU).
  bool share_gpus = false;
  /// CUDA: enqueue ahead (default; falls back to the loop when a CPU device computes) or loop.
  GpuDispatch dispatch = GpuDispatch::kAhead;
  /// Called with one line per finished run ("run 3/7: 12.3 ms"); null = silent.
  std::function<void(const std::string&)> progress;
  /// Test hooks, CPU executor only (null elsewhere): called under the executor's lock, inside the
  /// timed region, with a collective task, the index in task.group of a member device this process
  /// runs, and that member's buffer of ceil(bytes / 4) floats: just before the collective's first
  /// step (to fill it) and after its last (to read the sums). An all-to-all's count is rounded up
  /// to n equal parts; before it the buffer holds the parts to send (part j for member j), after
  /// it the parts received (part i from member i). (Pointer and count, not std::span:
  /// nvcc compiles this header as C++17.)
  std::function<void(const Task&, size_t member, float* values, size_t count)> before_collective;
  std::function<void(const Task&, size_t member, const float* values, size_t count)> after_collective;
};

class Executor : public PlanEngine {
 public:
  explicit Executor(ExecutionOptions options) : options_(std::move(options)) {}
  /// "measured/cpu" or "measured/cuda".
  virtual std::string source() const = 0;
  /// InputError naming the first task or device this machine cannot run, before any work.
  virtual void check_plan(const ExecutionPlan& plan, const Cluster& cluster) const = 0;
  /// Allocates buffers and starts threads/streams for the plan.
  virtual void prepare(const ExecutionPlan& plan, const Cluster& cluster) = 0;
  /// One execution of the prepared plan.
  virtual Timeline run_once() = 0;
  /// Stops threads and frees what prepare() allocated.
  virtual void release() = 0;

  /// check_plan, prepare, warm-up runs, timed runs, per-task medians, release.
  Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) override;
  /// The makespans of the last simulate()'s timed runs, in run order.
  const std::vector<double>& timed_makespans() const { return timed_makespans_; }
  const ExecutionOptions& options() const { return options_; }

 protected:
  ExecutionOptions options_;

 private:
  std::vector<double> timed_makespans_;
};

/// Per task, the median of the runs' start offsets and the median of their end offsets. Medians
/// are monotone (if x_i >= y_i in every run then median x >= median y), so the result keeps every
/// ordering the runs share: deps end before their successors start, and a device's tasks do not
/// overlap. Its makespan is at most the median of the runs' makespans.
Timeline median_timeline(const std::vector<Timeline>& runs);
using ::placesim::median;  // sim/core/quantile.h

}  // namespace placesim::real
