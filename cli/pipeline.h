// The stages of `placesim run`, chained: scenario -> placement -> plan -> engine -> metrics.
// The CLI commands are thin wrappers around these functions.
#pragma once

#include <string>

#include "sim/placement/placement.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/metrics.h"
#include "sim/scenario/scenario.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct PlannedScenario {
  Placement placement;
  ExecutionPlan plan;
};

PlannedScenario plan_scenario(const Scenario& scenario);

struct SimulatedRun {
  Timeline timeline;
  RunMetrics metrics;
};

SimulatedRun simulate_plan(const ExecutionPlan& plan, const Cluster& cluster);

/// Writes the trace and/or report files requested (empty path = skip), atomically.
void write_outputs(const std::string& scenario_name, const ExecutionPlan& plan, const Cluster& cluster,
                   const SimulatedRun& run, const std::string& trace_path, const std::string& report_path);

}  // namespace placesim
