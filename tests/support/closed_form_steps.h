// The check several 3D features make: the closed-form tier (one micro-batch's cells) must give
// the analytical tier's step on the whole plan of the same scenario.
#pragma once

#include <gtest/gtest.h>

#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/session/pipeline.h"

namespace placesim::testing {

/// Plans the scenario's first (parallelism) strategy, list-schedules the whole plan and expects
/// the closed form's step to equal it (relative 1e-12).
inline void expect_closed_form_gives_the_analytical_step(const Scenario& scenario) {
  const Strategy& strategy = scenario.strategies.front();
  const Cluster& cluster = scenario.cluster_for(strategy);
  const double analytical = estimate_step(plan_scenario(scenario).plan, cluster).step_seconds;
  const ClosedFormStepEstimate estimate =
      estimate_3d_step_closed_form(scenario.graph, cluster, scenario.run, *strategy.parallelism);
  EXPECT_NEAR(estimate.step_seconds, analytical, 1e-12 * analytical);
}

}  // namespace placesim::testing
