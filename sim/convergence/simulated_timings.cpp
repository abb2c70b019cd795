#include "sim/convergence/simulated_timings.h"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

namespace placesim {
namespace {

SimulatedTimings async_timings(const ExecutionPlan& plan, const Timeline& timeline, int64_t replicas) {
  std::string clock_variable;
  for (const Task& task : plan.tasks) {
    if (task.phase == Phase::kPull) {
      clock_variable = task.op;
      break;
    }
  }
  const size_t steps = static_cast<size_t>(plan.steps);
  std::vector<std::vector<double>> pull(static_cast<size_t>(replicas), std::vector<double>(steps, -1));
  std::vector<std::vector<double>> apply = pull;
  for (const Task& task : plan.tasks) {
    if (task.op != clock_variable || task.replica < 0) continue;
    const auto r = static_cast<size_t>(task.replica);
    const auto k = static_cast<size_t>(task.step);
    if (task.phase == Phase::kPull) pull[r][k] = timeline.tasks[task.id].start_seconds;
    if (task.phase == Phase::kApply) apply[r][k] = timeline.tasks[task.id].end_seconds;
  }
  SimulatedTimings timings;
  timings.asynchronous = true;
  // Workers are the replicas whose updates the servers apply (with local aggregation, the
  // machines' leaders), renumbered 0, 1, ...
  for (size_t r = 0; r < pull.size(); ++r) {
    if (std::any_of(apply[r].begin(), apply[r].end(), [](double t) { return t < 0; })) continue;
    std::vector<IterationTiming> worker;
    double previous = 0;
    for (size_t k = 0; k < steps; ++k) {
      const double read = std::max(pull[r][k], previous);
      worker.push_back({read - previous, apply[r][k] - read});
      previous = apply[r][k];
    }
    timings.iterations.push_back(std::move(worker));
  }
  timings.workers = static_cast<int64_t>(timings.iterations.size());
  return timings;
}

SimulatedTimings sync_timings(const ExecutionPlan& plan, const Timeline& timeline, int64_t replicas) {
  const size_t steps = static_cast<size_t>(plan.steps);
  std::vector<double> step_end(steps, 0);
  std::vector<std::vector<double>> ready(steps, std::vector<double>(static_cast<size_t>(replicas), 0));
  for (const Task& task : plan.tasks) {
    const auto k = static_cast<size_t>(task.step);
    const TaskInterval& interval = timeline.tasks[task.id];
    step_end[k] = std::max(step_end[k], interval.end_seconds);
    if (task.phase == Phase::kBackward && task.replica >= 0) {
      double& end = ready[k][static_cast<size_t>(task.replica)];
      end = std::max(end, interval.end_seconds);
    }
  }
  SimulatedTimings timings;
  timings.workers = replicas;
  double previous = 0;
  for (size_t k = 0; k < steps; ++k) {
    SyncStepTiming step;
    double last = previous;
    for (double end : ready[k]) {
      step.ready_seconds.push_back(std::max(0.0, end - previous));
      last = std::max(last, end);
    }
    step.tail_seconds = std::max(0.0, step_end[k] - last);
    timings.steps.push_back(std::move(step));
    previous = std::max(previous, step_end[k]);
  }
  return timings;
}

/// Each op's weights on each device are updated once per update, in update order: an op's n-th
/// optimizer task on a device belongs to update n. Raises `ends_of(device)`[n] (skipped where it
/// returns null, or past its size) to the latest such task's end.
void read_update_ends(const ExecutionPlan& plan, const Timeline& timeline,
                      const std::function<std::vector<double>*(DeviceId)>& ends_of) {
  std::map<std::pair<std::string, DeviceId>, int64_t> seen;
  for (const Task& task : plan.tasks) {
    if (task.phase != Phase::kOptimizer) continue;
    std::vector<double>* ends = ends_of(task.device);
    if (!ends) continue;
    const int64_t index = seen[{task.op, task.device}]++;
    if (index >= static_cast<int64_t>(ends->size())) continue;
    double& end = (*ends)[static_cast<size_t>(index)];
    end = std::max(end, timeline.tasks[task.id].end_seconds);
  }
}

}  // namespace

SimulatedTimings extract_timings(const ExecutionPlan& plan, const Timeline& timeline) {
  int64_t replicas = 0;
  bool asynchronous = false, backward = false;
  for (const Task& task : plan.tasks) {
    replicas = std::max(replicas, task.replica + 1);
    if (task.phase == Phase::kApply && task.replica >= 0) asynchronous = true;
    if (task.phase == Phase::kBackward) backward = true;
  }
  if (replicas == 0 || !backward) throw std::invalid_argument("not a data-parallel training plan");
  SimulatedTimings timings =
      asynchronous ? async_timings(plan, timeline, replicas) : sync_timings(plan, timeline, replicas);
  timings.simulated_steps = plan.steps;
  if (timings.workers == 0) throw std::invalid_argument("the plan has no worker that applies updates");
  return timings;
}

SimulatedTimings extract_pipeline_timings(const ExecutionPlan& plan, const Timeline& timeline, int64_t stages,
                                          int64_t replicas, int64_t micro_batches, bool asynchronous,
                                          bool double_buffered) {
  PipelineTimings pipeline;
  pipeline.stages = stages;
  pipeline.replicas = replicas;
  pipeline.micro_batches = micro_batches;
  pipeline.double_buffered = asynchronous && double_buffered;
  pipeline.updates_per_step = asynchronous && !double_buffered ? micro_batches : 1;
  const int64_t updates = plan.steps * pipeline.updates_per_step;
  pipeline.update_end_seconds.assign(static_cast<size_t>(updates), -1);
  // An update is a micro-batch's under PipeDream, a step's otherwise.
  read_update_ends(plan, timeline, [&](DeviceId) { return &pipeline.update_end_seconds; });
  for (double end : pipeline.update_end_seconds) {
    if (end < 0) throw std::invalid_argument("a pipeline update the plan does not have");
  }
  SimulatedTimings timings;
  timings.asynchronous = asynchronous;
  timings.workers = replicas * (micro_batches / pipeline.updates_per_step);  // gradients per update
  timings.simulated_steps = plan.steps;
  timings.pipeline = std::move(pipeline);
  return timings;
}

SimulatedTimings extract_replicated_stage_timings(const ExecutionPlan& plan, const Timeline& timeline,
                                                  const ParallelismOptions& options) {
  PipelineTimings pipeline;
  pipeline.stages = options.pipeline;
  pipeline.replicas = options.data;
  pipeline.micro_batches = options.micro_batches;
  pipeline.updates_per_step = options.micro_batches;  // per stream
  pipeline.stage_replicas = options.stage_replicas;
  std::map<DeviceId, int64_t> stage_of;
  for (int64_t s = 0; s < options.pipeline; ++s) {
    for (int64_t r = 0; r < options.stage_width(s); ++r) {
      for (int64_t t = 0; t < options.tensor; ++t) stage_of[options.device(r, s, t)] = s;
    }
  }
  pipeline.stage_update_end_seconds.resize(static_cast<size_t>(options.pipeline));
  for (int64_t s = 0; s < options.pipeline; ++s) {
    const int64_t rounds = plan.steps * (options.data / options.stage_width(s)) * options.micro_batches;
    pipeline.stage_update_end_seconds[static_cast<size_t>(s)].assign(static_cast<size_t>(rounds), -1);
  }
  // A stage's update is one round's, on every replica of the stage.
  read_update_ends(plan, timeline, [&](DeviceId device) -> std::vector<double>* {
    const auto stage = stage_of.find(device);
    return stage == stage_of.end() ? nullptr : &pipeline.stage_update_end_seconds[static_cast<size_t>(stage->second)];
  });
  for (size_t s = 0; s < pipeline.stage_update_end_seconds.size(); ++s) {
    const std::vector<double>& ends = pipeline.stage_update_end_seconds[s];
    const auto missing = std::find_if(ends.begin(), ends.end(), [](double end) { return end < 0; });
    if (missing == ends.end()) continue;
    if (std::all_of(ends.begin(), ends.end(), [](double end) { return end < 0; })) {
      throw std::invalid_argument("stage " + std::to_string(s) + " holds no weights, so it has no updates (give " +
                                  "every stage some of the model's weights)");
    }
    throw std::invalid_argument("stage " + std::to_string(s) + " has no update for its round " +
                                std::to_string(missing - ends.begin()));
  }
  SimulatedTimings timings;
  timings.asynchronous = true;
  timings.workers = options.data;
  timings.simulated_steps = plan.steps;
  timings.pipeline = std::move(pipeline);
  return timings;
}

}  // namespace placesim
