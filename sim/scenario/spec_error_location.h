// Where the user wrote what a planner's SpecError names: the strategy's option in the scenario
// file (or in a sweep's strategy list), a run or simulation option, or an op's own "device" in
// the model file or inline graph. Part of the scenario loader, the only code that knows paths.
#pragma once

#include "sim/core/input_error.h"
#include "sim/scenario/scenario.h"
#include "sim/spec/spec_error.h"

namespace placesim {

/// `strategy` is one of `scenario`'s, or derived from one (found by its name).
InputError locate_spec_error(const Scenario& scenario, const Strategy& strategy, const SpecError& error);

}  // namespace placesim
