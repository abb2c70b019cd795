// The stages of `placesim run`, chained: scenario -> placement -> plan -> engine -> metrics.
// The CLI commands are thin wrappers around these functions.
#pragma once

#include <optional>
#include <string>

#include "sim/placement/placement.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/comparison_report.h"
#include "sim/report/metrics.h"
#include "sim/report/pipeline_metrics.h"
#include "sim/scenario/scenario.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct PlannedScenario {
  Placement placement;  ///< of one replica
  ExecutionPlan plan;
  std::vector<std::string> notes;  ///< choices made while planning (e.g. the all-reduce algorithm picked)
};

/// Places and plans one strategy of the scenario (data parallel or not).
PlannedScenario plan_strategy(const Scenario& scenario, const Strategy& strategy);
/// The first strategy's plan.
PlannedScenario plan_scenario(const Scenario& scenario);

struct SimulatedRun {
  Timeline timeline;
  RunMetrics metrics;
};

SimulatedRun simulate_plan(const ExecutionPlan& plan, const Cluster& cluster);

/// Plans and simulates one strategy; for data-parallel strategies also the same strategy on its
/// first replica alone (the baseline of scaling efficiency) when `with_baseline`.
struct EvaluatedStrategy {
  PlannedScenario planned;
  SimulatedRun run;
  StrategyResult result;
  std::optional<PipelineMetrics> pipeline;  ///< pipeline-parallel strategies only
};
EvaluatedStrategy evaluate_strategy(const Scenario& scenario, const Strategy& strategy, bool with_baseline);

/// Writes the trace and/or report files requested (empty path = skip), atomically.
void write_outputs(const std::string& scenario_name, const ExecutionPlan& plan, const Cluster& cluster,
                   const SimulatedRun& run, const std::string& trace_path, const std::string& report_path,
                   const DataParallelMetrics* data_parallel = nullptr, const PipelineMetrics* pipeline = nullptr);

}  // namespace placesim
