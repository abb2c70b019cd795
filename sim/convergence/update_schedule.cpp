#include "sim/convergence/update_schedule.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace placesim {
namespace {

struct Iteration {
  double start_seconds = 0;
  double apply_seconds = 0;
};

/// Every worker's first `iterations` iterations, timed under the staleness bound.
std::vector<std::vector<Iteration>> time_iterations(const SimulatedTimings& timings,
                                                    std::optional<int64_t> staleness_bound, int64_t iterations) {
  const auto workers = static_cast<size_t>(timings.workers);
  const auto period = static_cast<int64_t>(timings.iterations.front().size());
  std::vector<std::vector<Iteration>> timed(workers);
  for (int64_t k = 0; k < iterations; ++k) {
    // Everyone's iteration k - s - 1 must have been applied (computed in an earlier round).
    double barrier = 0;
    if (staleness_bound && k - *staleness_bound - 1 >= 0) {
      const auto waited = static_cast<size_t>(k - *staleness_bound - 1);
      for (const auto& worker : timed) barrier = std::max(barrier, worker[waited].apply_seconds);
    }
    for (size_t w = 0; w < workers; ++w) {
      const IterationTiming& timing = timings.iterations[w][static_cast<size_t>(k % period)];
      const double previous = k == 0 ? 0.0 : timed[w].back().apply_seconds;
      const double start = std::max(previous + timing.wait_seconds, barrier);
      timed[w].push_back({start, start + timing.busy_seconds});
    }
  }
  return timed;
}

}  // namespace

UpdateTrace schedule_async(const SimulatedTimings& timings, std::optional<int64_t> staleness_bound,
                           int64_t max_gradients) {
  if (!timings.asynchronous || timings.workers <= 0) throw std::invalid_argument("schedule_async needs async timings");
  UpdateTrace trace;
  trace.workers = timings.workers;
  trace.asynchronous = true;
  // Time enough iterations that `max_gradients` applies happen before the horizon, the earliest
  // last apply of any worker: before it, every worker's applies are known. A fast worker may do
  // many more iterations than a slow one, hence the doubling.
  int64_t iterations = std::max<int64_t>(1, (max_gradients + timings.workers - 1) / timings.workers);
  for (;;) {
    auto timed = time_iterations(timings, staleness_bound, iterations);
    double horizon = timed.front().back().apply_seconds;
    for (const auto& worker : timed) horizon = std::min(horizon, worker.back().apply_seconds);
    // (apply time, worker, iteration, start time), in apply order.
    std::vector<std::tuple<double, int64_t, int64_t, double>> applies;
    for (size_t w = 0; w < timed.size(); ++w) {
      for (size_t k = 0; k < timed[w].size(); ++k) {
        if (timed[w][k].apply_seconds <= horizon) {
          applies.emplace_back(timed[w][k].apply_seconds, static_cast<int64_t>(w), static_cast<int64_t>(k),
                               timed[w][k].start_seconds);
        }
      }
    }
    if (static_cast<int64_t>(applies.size()) < max_gradients) {
      iterations *= 2;
      continue;
    }
    std::sort(applies.begin(), applies.end());
    applies.resize(static_cast<size_t>(max_gradients));
    std::vector<double> apply_times;
    for (const auto& apply : applies) apply_times.push_back(std::get<0>(apply));
    for (const auto& [apply_seconds, worker, iteration, start_seconds] : applies) {
      TracedUpdate update;
      update.apply_seconds = apply_seconds;
      // Reads every update applied by its start, a tie included.
      update.version_read =
          std::upper_bound(apply_times.begin(), apply_times.end(), start_seconds) - apply_times.begin();
      update.gradients = {{worker, iteration}};
      trace.updates.push_back(std::move(update));
    }
    return trace;
  }
}

UpdateTrace schedule_sync(const SimulatedTimings& timings, int64_t backup_workers, int64_t max_gradients) {
  if (timings.asynchronous || timings.steps.empty()) throw std::invalid_argument("schedule_sync needs sync timings");
  if (backup_workers < 0 || backup_workers >= timings.workers) throw std::invalid_argument("backup_workers out of range");
  UpdateTrace trace;
  trace.workers = timings.workers;
  const auto aggregated = static_cast<size_t>(timings.workers - backup_workers);
  const int64_t steps = (max_gradients + timings.workers - 1) / timings.workers;
  double now = 0;
  for (int64_t k = 0; k < steps; ++k) {
    const SyncStepTiming& step = timings.steps[static_cast<size_t>(k) % timings.steps.size()];
    std::vector<int64_t> order(step.ready_seconds.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return step.ready_seconds[static_cast<size_t>(a)] < step.ready_seconds[static_cast<size_t>(b)];
    });
    order.resize(aggregated);
    std::sort(order.begin(), order.end());  // summed in worker order
    double last_ready = 0;
    TracedUpdate update;
    for (int64_t worker : order) {
      last_ready = std::max(last_ready, step.ready_seconds[static_cast<size_t>(worker)]);
      update.gradients.push_back({worker, k});
    }
    now += last_ready + step.tail_seconds;
    update.apply_seconds = now;
    update.version_read = k;
    // The mean of the aggregated gradients at replicas x learning_rate (linear scaling).
    update.gradient_weight = static_cast<double>(timings.workers) / static_cast<double>(aggregated);
    update.gradients_computed = timings.workers;
    trace.updates.push_back(std::move(update));
  }
  return trace;
}

UpdateTrace sequential_trace(int64_t workers, int64_t max_gradients) {
  UpdateTrace trace;
  trace.workers = workers;
  trace.asynchronous = true;
  trace.timed = false;
  for (int64_t u = 0; u < max_gradients; ++u) {
    TracedUpdate update;
    update.version_read = u;
    update.gradients = {{u % workers, u / workers}};
    trace.updates.push_back(std::move(update));
  }
  return trace;
}

UpdateTrace schedule_pipeline(const SimulatedTimings& timings, const std::vector<int64_t>& layer_staleness,
                              int64_t max_gradients) {
  const PipelineTimings& pipeline = *timings.pipeline;
  const std::vector<double>& ends = pipeline.update_end_seconds;
  const auto simulated = static_cast<int64_t>(ends.size());
  UpdateTrace trace;
  trace.workers = timings.workers;
  trace.asynchronous = timings.asynchronous;
  const int64_t per_update = timings.workers;  // gradients in one update
  if (timings.asynchronous) {
    trace.layer_staleness = layer_staleness;
    const int64_t oldest = layer_staleness.empty() ? 0 : *std::max_element(layer_staleness.begin(), layer_staleness.end());
    // Past the simulated run, the last step's spacing (its updates; the whole run when shorter).
    const int64_t span = std::min<int64_t>(pipeline.updates_per_step, simulated - 1);
    const double spacing = span > 0 ? (ends.back() - ends[static_cast<size_t>(simulated - 1 - span)]) / static_cast<double>(span)
                                    : ends.back();
    for (int64_t u = 0; u * per_update < max_gradients; ++u) {
      TracedUpdate update;
      update.apply_seconds = u < simulated ? ends[static_cast<size_t>(u)]
                                           : ends.back() + static_cast<double>(u - simulated + 1) * spacing;
      update.version_read = std::max<int64_t>(0, u - oldest);
      for (int64_t w = 0; w < per_update; ++w) update.gradients.push_back({w, u});
      update.gradients_computed = per_update;
      trace.updates.push_back(std::move(update));
    }
    return trace;
  }
  for (int64_t k = 0; k * per_update < max_gradients; ++k) {
    TracedUpdate update;
    update.apply_seconds = ends[static_cast<size_t>(k % simulated)] + static_cast<double>(k / simulated) * ends.back();
    update.version_read = k;
    for (int64_t w = 0; w < per_update; ++w) update.gradients.push_back({w, k});
    update.gradients_computed = per_update;
    trace.updates.push_back(std::move(update));
  }
  return trace;
}

UpdateTrace schedule_replicated_stages(const SimulatedTimings& timings, const std::vector<int64_t>& layer_stage,
                                       const std::vector<int64_t>& stage_staleness, int64_t max_gradients) {
  const PipelineTimings& pipeline = *timings.pipeline;
  const std::vector<int64_t>& widths = pipeline.stage_replicas;
  const size_t stages = widths.size();
  if (stages == 0 || stage_staleness.size() != stages || pipeline.stage_update_end_seconds.size() != stages) {
    throw std::invalid_argument("schedule_replicated_stages needs each stage's width, staleness and update times");
  }
  const int64_t streams = *std::max_element(widths.begin(), widths.end());
  // Each stage's update times, continued past the simulated ones at its last step's spacing.
  std::vector<double> spacing(stages);
  for (size_t s = 0; s < stages; ++s) {
    const std::vector<double>& ends = pipeline.stage_update_end_seconds[s];
    if (ends.empty()) throw std::invalid_argument("a replicated stage without updates");
    const auto simulated = static_cast<int64_t>(ends.size());
    const int64_t per_step = streams / widths[s] * pipeline.micro_batches;
    const int64_t span = std::min<int64_t>(per_step, simulated - 1);
    spacing[s] = span > 0 ? (ends.back() - ends[static_cast<size_t>(simulated - 1 - span)]) / static_cast<double>(span)
                          : ends.back();
  }
  auto update_end = [&](size_t s, int64_t k) {
    const std::vector<double>& ends = pipeline.stage_update_end_seconds[s];
    const auto simulated = static_cast<int64_t>(ends.size());
    return k < simulated ? ends[static_cast<size_t>(k)] : ends.back() + static_cast<double>(k - simulated + 1) * spacing[s];
  };
  UpdateTrace trace;
  trace.workers = timings.workers;
  trace.asynchronous = true;
  trace.layer_stage = layer_stage;
  const int64_t gradients = (max_gradients + streams - 1) / streams * streams;  // whole rounds of every stage
  for (int64_t g = 0; g < gradients; ++g) {
    for (size_t s = stages; s-- > 0;) {
      const int64_t width = widths[s];
      if ((g + 1) % width != 0) continue;
      TracedUpdate update;
      update.stage = static_cast<int64_t>(s);
      update.stage_update = g / width;
      update.apply_seconds = update_end(s, update.stage_update);
      update.version_read = update.stage_update;
      for (int64_t unit = g + 1 - width; unit <= g; ++unit) {
        std::vector<int64_t> versions;
        for (size_t read = 0; read < stages; ++read) {
          versions.push_back(std::max<int64_t>(0, unit / widths[read] - stage_staleness[read]));
        }
        update.version_read = std::min(update.version_read, versions[s]);
        update.gradients.push_back({unit % streams, unit / streams});
        update.stage_versions.push_back(std::move(versions));
      }
      update.gradients_computed = width;
      trace.updates.push_back(std::move(update));
    }
  }
  return trace;
}

}  // namespace placesim
