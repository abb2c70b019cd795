// One strategy's step on its scenario's tier, however that tier computes it: the simulated and
// analytical tiers plan the step and run the plan on their engine (make_engine, through
// evaluate_strategy); the closed-form tier builds no plan of the step and solves the 3D closed
// form from one micro-batch's cells. The one place that picks between them for a scenario:
// `run`, `check` and `validate` read a step through it. A sweep, which evaluates thousands of
// configurations, calls the same two computations itself with less bookkeeping per row
// (sweep_evaluation.cpp: the closed form for 3D layouts at "analytical" fidelity).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/analytical/pipeline_closed_form.h"
#include "sim/scenario/scenario.h"
#include "sim/session/pipeline.h"

namespace placesim {

struct TierStep {
  double step_seconds = 0;
  double samples_per_second = 0;  ///< the whole step's (an asynchronous run: the workers' rates summed)
  size_t tasks = 0;               ///< the step's plan, or (closed form) one micro-batch's cell plan
  std::vector<std::string> out_of_memory;  ///< memory verdicts, worst first; empty: it fits
  /// Where memory is nearest capacity (the first such): a device ("GPU:0") or, closed form, a
  /// stage ("stage 1"); "" when no device has a capacity.
  std::string fullest;
  double fullest_peak_bytes = 0;
  double fullest_capacity_bytes = 0;
  std::optional<EvaluatedStrategy> planned;           ///< the simulated and analytical tiers
  std::optional<ClosedFormStepEstimate> closed_form;  ///< the closed-form tier

  double fullest_share() const { return fullest.empty() ? -1 : fullest_peak_bytes / fullest_capacity_bytes; }
};

/// `with_baseline`: the plan-building tiers also run one replica, for the scaling efficiency
/// (evaluate_strategy). Throws InputError for a strategy the tier cannot take (the closed form
/// takes "parallelism" strategies only).
TierStep evaluate_on_tier(const Scenario& scenario, const Strategy& strategy, bool with_baseline);

}  // namespace placesim
