// Loads a scenario file, places and plans its first strategy, prints TensorFlow's placement log
// and the plan's size, then runs the plan on the scenario's tier and prints the step time: what
// `placesim run` does, through the library.
//
//   build/examples/scenario_placement [scenarios/seed_device_placement.json]
#include <cstdio>
#include <exception>

#include "sim/cluster/hardware_catalog.h"
#include "sim/placement/placement_log.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/pipeline.h"

using namespace placesim;

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "scenarios/seed_device_placement.json";
  try {
    const HardwareCatalog catalog(HardwareCatalog::default_root());
    const Scenario scenario = load_scenario(path, catalog);
    const Strategy& strategy = scenario.strategies.front();
    const Cluster& cluster = scenario.cluster_for(strategy);
    const PlannedScenario planned = plan_strategy(scenario, strategy);
    std::printf("%s", placement_log(scenario.graph, cluster, planned.placement).c_str());
    std::printf("%zu ops on %zu devices -> %zu tasks\n", scenario.graph.size(), cluster.devices().size(),
                planned.plan.tasks.size());
    const SimulatedRun run = run_plan(planned.plan, cluster, scenario.run.tier);
    std::printf("step time %.6f ms on the %s tier\n", run.metrics.step_time_seconds * 1e3,
                to_string(scenario.run.tier).c_str());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", path, error.what());
    return 2;
  }
  return 0;
}
