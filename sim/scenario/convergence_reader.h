// Reads a scenario's "convergence" block (docs/convergence.md): the generated problem and the
// staleness remedies `placesim converge` measures. Part of the scenario loader: the only code
// that reads scenario JSON.
#pragma once

#include "sim/spec/convergence_options.h"
#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// The options of `block` (an object), checked against the scenario's run and strategies: it
/// needs training and a data-parallel strategy, and backup workers fewer than the replicas of
/// some synchronous strategy. Fields absent take ConvergenceOptions' defaults; seed: run.seed.
ConvergenceOptions read_convergence(const JsonReader& block, const Scenario& scenario);

}  // namespace placesim
