#include "cli/pipeline.h"

#include <filesystem>

#include "sim/core/atomic_file.h"
#include "sim/core/input_error.h"
#include "sim/engine/simgrid_engine.h"
#include "sim/plan/plan_builder.h"
#include "sim/report/json_report.h"
#include "sim/timeline/chrome_trace.h"

namespace placesim {

PlannedScenario plan_scenario(const Scenario& scenario) {
  PlannedScenario planned;
  planned.placement = place_ops(scenario.graph, scenario.cluster, scenario.placement, scenario.file.string());
  planned.plan = build_plan(scenario.graph, planned.placement, scenario.cluster, scenario.run, scenario.name);
  return planned;
}

SimulatedRun simulate_plan(const ExecutionPlan& plan, const Cluster& cluster) {
  SimulatedRun run;
  run.timeline = make_simgrid_engine()->simulate(plan, cluster);
  run.metrics = compute_metrics(plan, cluster, run.timeline);
  return run;
}

void write_outputs(const std::string& scenario_name, const ExecutionPlan& plan, const Cluster& cluster,
                   const SimulatedRun& run, const std::string& trace_path, const std::string& report_path) {
  if (!trace_path.empty()) {
    write_file_atomically(trace_path, chrome_trace(plan, cluster, run.timeline).dump() + "\n");
  }
  try {
    if (!report_path.empty()) {
      write_file_atomically(report_path,
                            json_report(scenario_name, plan, cluster, run.timeline, run.metrics).dump(2) + "\n");
    }
  } catch (const InputError&) {
    // All or nothing: a trace without its report is a partial output.
    std::error_code ignored;
    if (!trace_path.empty()) std::filesystem::remove(trace_path, ignored);
    throw;
  }
}

}  // namespace placesim
