// Reads a scenario's "strategy" / "strategies" (placement rules, data parallelism) and
// "perturbations" (slow devices, jitter, degraded links), resolving device names against the
// cluster. Part of the scenario loader: the only code that reads scenario JSON.
#pragma once

#include <vector>

#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// The strategies of a scenario document (at least one). `published` is the top-level
/// "published" block, which belongs to the single "strategy" form.
std::vector<Strategy> read_strategies(const JsonReader& document, const Cluster& cluster);

/// Applies "perturbations" to the cluster (device speed factors, link bandwidth factors) and
/// the run options (jitter).
void apply_perturbations(const JsonReader& perturbations, Cluster* cluster, RunOptions* run);

}  // namespace placesim
