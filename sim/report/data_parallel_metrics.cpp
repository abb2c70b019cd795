#include "sim/report/data_parallel_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

namespace placesim {

StalenessStats summarize(std::vector<double> values) {
  StalenessStats stats;
  stats.updates = values.size();
  if (values.empty()) return stats;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()))) ;
    return values[std::min(values.size() - 1, index == 0 ? 0 : index - 1)];
  };
  stats.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  stats.p50 = rank(0.5);
  stats.p99 = rank(0.99);
  stats.max = values.back();
  return stats;
}

DataParallelMetrics compute_data_parallel_metrics(const ExecutionPlan& plan, const Timeline& timeline) {
  DataParallelMetrics metrics;
  int64_t replicas = 0;
  for (const Task& task : plan.tasks) {
    replicas = std::max(replicas, task.replica + 1);
    if (task.phase == Phase::kApply && task.replica >= 0) metrics.asynchronous = true;  // per-worker applies
  }
  metrics.replicas = static_cast<size_t>(replicas);
  if (replicas == 0) return metrics;
  const double steps = static_cast<double>(plan.steps);
  const double batch = static_cast<double>(plan.samples_per_step) / static_cast<double>(replicas);

  metrics.per_replica.resize(static_cast<size_t>(replicas));
  for (int64_t r = 0; r < replicas; ++r) metrics.per_replica[static_cast<size_t>(r)].replica = r;
  for (const Task& task : plan.tasks) {
    if (task.replica < 0) continue;
    auto& replica = metrics.per_replica[static_cast<size_t>(task.replica)];
    replica.finish_seconds = std::max(replica.finish_seconds, timeline.tasks[task.id].end_seconds);
  }
  for (auto& replica : metrics.per_replica) {
    replica.step_seconds = replica.finish_seconds / steps;
    replica.samples_per_second = replica.finish_seconds > 0 ? batch * steps / replica.finish_seconds : 0;
  }

  if (metrics.asynchronous) {
    // The version clock: the variable of the first pull in the plan.
    std::string clock_variable;
    for (const Task& task : plan.tasks) {
      if (task.phase == Phase::kPull) {
        clock_variable = task.op;
        break;
      }
    }
    std::vector<double> apply_ends;
    std::map<std::pair<int64_t, int64_t>, double> pull_start, apply_start;  // (replica, step) -> time
    for (const Task& task : plan.tasks) {
      if (task.op != clock_variable) continue;
      const TaskInterval& interval = timeline.tasks[task.id];
      if (task.phase == Phase::kApply) {
        apply_ends.push_back(interval.end_seconds);
        apply_start[{task.replica, task.step}] = interval.start_seconds;
      } else if (task.phase == Phase::kPull) {
        pull_start[{task.replica, task.step}] = interval.start_seconds;
      }
    }
    std::sort(apply_ends.begin(), apply_ends.end());
    auto applied_by = [&](double time) {
      return static_cast<double>(std::upper_bound(apply_ends.begin(), apply_ends.end(), time) - apply_ends.begin());
    };
    std::vector<double> all;
    std::vector<std::vector<double>> per_replica(static_cast<size_t>(replicas));
    for (const auto& [key, start] : apply_start) {
      auto pulled = pull_start.find(key);
      if (pulled == pull_start.end()) continue;
      double staleness = applied_by(start) - applied_by(pulled->second);
      all.push_back(staleness);
      per_replica[static_cast<size_t>(key.first)].push_back(staleness);
    }
    metrics.staleness = summarize(all);
    for (size_t r = 0; r < per_replica.size(); ++r) metrics.per_replica[r].staleness = summarize(per_replica[r]);
    double rate = 0, step_sum = 0;
    for (const auto& replica : metrics.per_replica) {
      rate += replica.samples_per_second;
      step_sum += replica.step_seconds;
    }
    metrics.samples_per_second = rate;
    metrics.step_time_seconds = step_sum / static_cast<double>(replicas);
    return metrics;
  }

  // Synchronous: every replica waits at the gradient exchange for the last one to finish backward.
  metrics.step_time_seconds = timeline.makespan_seconds() / steps;
  metrics.samples_per_second =
      metrics.step_time_seconds > 0 ? static_cast<double>(plan.samples_per_step) / metrics.step_time_seconds : 0;
  std::map<int64_t, std::vector<double>> ready;  // step -> per replica end of its last backward
  for (const Task& task : plan.tasks) {
    if (task.phase != Phase::kBackward || task.replica < 0) continue;
    auto& ends = ready[task.step];
    ends.resize(static_cast<size_t>(replicas), 0.0);
    double& end = ends[static_cast<size_t>(task.replica)];
    end = std::max(end, timeline.tasks[task.id].end_seconds);
  }
  double loss = 0;
  for (const auto& [step, ends] : ready) {
    double slowest = *std::max_element(ends.begin(), ends.end());
    double mean = std::accumulate(ends.begin(), ends.end(), 0.0) / static_cast<double>(ends.size());
    loss += std::max(0.0, slowest - mean);  // rounding can make a tie a hair negative
  }
  metrics.straggler_loss_seconds = ready.empty() ? 0 : loss / static_cast<double>(ready.size());
  metrics.straggler_share =
      metrics.step_time_seconds > 0 ? metrics.straggler_loss_seconds / metrics.step_time_seconds : 0;
  return metrics;
}

}  // namespace placesim
