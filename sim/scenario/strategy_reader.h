// Reads a scenario's "strategy" / "strategies" (placement rules, data parallelism) and
// "perturbations" (slow devices, jitter, degraded links), resolving device names against the
// cluster. Part of the scenario loader: the only code that reads scenario JSON.
#pragma once

#include <functional>
#include <vector>

#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// Builds a cluster from a "cluster" object (the scenario loader's cluster builder).
using ClusterReader = std::function<Cluster(const JsonReader&)>;

/// The strategies of a scenario document (at least one). A top-level "published" block belongs
/// to the single "strategy" form; a strategy may bring its own "cluster" (read with `read_cluster`).
std::vector<Strategy> read_strategies(const JsonReader& document, const Cluster& cluster,
                                      const ClusterReader& read_cluster);

/// Applies "perturbations" to the cluster (device speed factors, link bandwidth factors) and
/// the run options (jitter).
void apply_perturbations(const JsonReader& perturbations, Cluster* cluster, RunOptions* run);

/// A gradient bucket's size, `reader`'s "bucket_bytes" else `fallback`: at least one byte (a
/// smaller bucket would be a bucket per fraction of a byte) and at most kMaxPlausibleBytes.
double bucket_bytes_or(const JsonReader& reader, double fallback);

}  // namespace placesim
