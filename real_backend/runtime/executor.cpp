#include "real_backend/runtime/executor.h"

#include "sim/core/input_error.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace placesim::real {

Timeline median_timeline(const std::vector<Timeline>& runs) {
  if (runs.empty()) throw std::invalid_argument("median_timeline: no runs");
  Timeline result;
  result.source = runs.front().source;
  result.tasks.resize(runs.front().tasks.size());
  std::vector<double> starts(runs.size()), ends(runs.size());
  for (size_t task = 0; task < result.tasks.size(); ++task) {
    for (size_t run = 0; run < runs.size(); ++run) {
      starts[run] = runs[run].tasks.at(task).start_seconds;
      ends[run] = runs[run].tasks.at(task).end_seconds;
    }
    result.tasks[task] = {median(starts), median(ends)};
  }
  return result;
}

Timeline Executor::simulate(const ExecutionPlan& plan, const Cluster& cluster) {
  if (plan.symmetry.active()) {
    throw InputError("plan \"" + plan.name + "\"", "/simulation/symmetry",
                     "a plan simulated with symmetry leaves out the mirrored devices' tasks and cannot be executed; "
                     "set \"symmetry\": \"off\"");
  }
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& task = plan.tasks[i];
    if (task.kind == TaskKind::kCollective && task.algorithm == CollectiveAlgorithm::kHostHalvingDoubling) {
      throw InputError("plan \"" + plan.name + "\"", "/tasks/" + std::to_string(i) + "/algorithm",
                       "\"host_halving_doubling\" stages the all-reduce through each machine's CPU, which this "
                       "backend's collectives do not do; it is simulated only (run, simulate); execute the plan with "
                       "\"ring\", \"tree\", \"halving_doubling\" or \"hierarchical\"");
    }
  }
  check_plan(plan, cluster);
  prepare(plan, cluster);
  std::vector<Timeline> runs;
  timed_makespans_.clear();
  try {
    const int total = options_.warmup_runs + options_.timed_runs;
    for (int run = 0; run < total; ++run) {
      Timeline timeline = run_once();
      bool warmup = run < options_.warmup_runs;
      if (options_.progress) {
        char line[160];
        std::snprintf(line, sizeof line, "%s %d/%d: %.3f ms", warmup ? "warm-up" : "run",
                      warmup ? run + 1 : run - options_.warmup_runs + 1,
                      warmup ? options_.warmup_runs : options_.timed_runs, timeline.makespan_seconds() * 1e3);
        options_.progress(line);
      }
      if (warmup) continue;
      timed_makespans_.push_back(timeline.makespan_seconds());
      runs.push_back(std::move(timeline));
    }
  } catch (...) {
    release();
    throw;
  }
  release();
  return median_timeline(runs);
}

}  // namespace placesim::real
