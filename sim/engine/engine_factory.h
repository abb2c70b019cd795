// The engine of a tier: the one place that chooses between the SimGrid engine and the analytical
// list scheduler for a plan (the closed-form tier builds no plan of the step: no engine).
#pragma once

#include <memory>

#include "sim/engine/engine.h"
#include "sim/spec/tier.h"

namespace placesim {

/// The SimGrid engine for Tier::kSimulated, the analytical engine (estimate_step's timeline) for
/// Tier::kAnalytical. Throws std::invalid_argument for Tier::kClosedForm.
std::unique_ptr<PlanEngine> make_engine(Tier tier);

}  // namespace placesim
