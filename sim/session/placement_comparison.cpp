#include "sim/session/placement_comparison.h"

#include <chrono>
#include <functional>

#include "sim/auto_placement/auto_placer.h"
#include "sim/planner/plan_builder.h"
#include "sim/report/memory_verdict.h"
#include "sim/scenario/spec_error_location.h"
#include "sim/session/pipeline.h"

namespace placesim {
namespace {

PlacementRow evaluate(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                      const std::string& algorithm, const std::function<Placement()>& place) {
  PlacementRow row;
  row.algorithm = algorithm;
  auto start = std::chrono::steady_clock::now();
  try {
    row.placement = place();
  } catch (const SpecError& error) {
    row.failure = locate_spec_error(scenario, strategy, error);
    return row;
  }
  row.placing_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ExecutionPlan plan = build_plan(scenario.graph, *row.placement, cluster, scenario.run, scenario.name + "/" + algorithm);
  row.metrics = simulate_plan(plan, cluster).metrics;
  return row;
}

}  // namespace

std::vector<PlacementRow> compare_placements(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                                             const AutoPlacementOptions& automatic,
                                             const std::vector<PlacementAlgorithm>& algorithms) {
  std::vector<PlacementRow> rows;
  if (!strategy.placement.automatic) {
    rows.push_back(evaluate(scenario, strategy, cluster, "rules (TF placer)",
                            [&] { return place_ops(scenario.graph, cluster, strategy.placement); }));
  }
  for (PlacementAlgorithm algorithm : algorithms) {
    AutoPlacementOptions run_options = automatic;
    run_options.algorithm = algorithm;
    rows.push_back(evaluate(scenario, strategy, cluster, to_string(algorithm), [&] {
      return auto_place(scenario.graph, cluster, scenario.run, run_options).placement;
    }));
  }
  return rows;
}

const PlacementRow* shown_placement(const std::vector<PlacementRow>& rows, const Strategy& strategy,
                                    const AutoPlacementOptions& automatic, const Cluster& cluster) {
  const PlacementRow* shown = nullptr;
  for (const PlacementRow& row : rows) {
    if (strategy.placement.automatic && row.algorithm == to_string(automatic.algorithm)) shown = &row;
  }
  if (!strategy.placement.automatic) {
    for (const PlacementRow& row : rows) {
      if (!row.placement || !out_of_memory_verdicts(row.metrics, cluster).empty()) continue;
      if (!shown || row.metrics.step_time_seconds < shown->metrics.step_time_seconds) shown = &row;
    }
  }
  return shown;
}

Json placement_report(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                      const std::vector<PlacementRow>& rows, const PlacementRow* shown, double memory_fraction) {
  Json algorithms = Json::array();
  for (const PlacementRow& row : rows) {
    Json entry = {{"algorithm", row.algorithm}};
    if (!row.placement) {
      entry["placed"] = false;
      entry["error"] = row.failure->what();
      algorithms.push_back(entry);
      continue;
    }
    Json devices = Json::object(), placement = Json::object();
    for (const DeviceMetrics& device : row.metrics.devices) {
      if (device.compute_tasks == 0) continue;
      devices[cluster.device(device.device).name.canonical()] = {
          {"peak_memory_bytes", device.peak_memory_bytes},
          {"memory_limit_bytes", device.memory_capacity_bytes * memory_fraction},
          {"memory_capacity_bytes", device.memory_capacity_bytes}};
    }
    for (OpId op = 0; op < scenario.graph.size(); ++op) {
      placement[scenario.graph.op(op).name] = cluster.device(row.placement->device_of_op[op]).name.canonical();
    }
    entry["placed"] = true;
    entry["step_time_seconds"] = row.metrics.step_time_seconds;
    entry["placing_seconds"] = row.placing_seconds;
    entry["out_of_memory_verdicts"] = out_of_memory_verdicts(row.metrics, cluster);
    entry["devices"] = devices;
    entry["placement"] = placement;
    algorithms.push_back(entry);
  }
  return {{"kind", "placesim-placement-report"},
          {"scenario", scenario.name},
          {"strategy", strategy.name},
          {"memory_fraction", memory_fraction},
          {"shown", shown && shown->placement ? Json(shown->algorithm) : Json(nullptr)},
          {"algorithms", algorithms}};
}

}  // namespace placesim
