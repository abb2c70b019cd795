// What `placesim place` compares (docs/placement.md): one strategy's ops placed by the TensorFlow
// placer's rules (when the strategy has no automatic placement) and by each placement algorithm
// asked for, each placement planned and simulated on the full engine (plan + SimGrid), and the
// comparison as JSON. The command parses options and prints the table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/placement/placement.h"
#include "sim/report/metrics.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// One row of the comparison: an algorithm's placement, or why it found none.
struct PlacementRow {
  std::string algorithm;
  std::optional<Placement> placement;
  std::optional<InputError> failure;  ///< why there is no placement
  double placing_seconds = 0;  ///< wall-clock time of the placement algorithm alone
  RunMetrics metrics;
};

/// "rules (TF placer)" first when `strategy` has no automatic placement, then one row per
/// algorithm, in the order given; `automatic` holds the options every algorithm runs with.
std::vector<PlacementRow> compare_placements(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                                             const AutoPlacementOptions& automatic,
                                             const std::vector<PlacementAlgorithm>& algorithms);

/// The row whose placement log is shown: the scenario's own algorithm when the strategy places
/// automatically, else the fastest placement that fits in memory; null when there is none.
const PlacementRow* shown_placement(const std::vector<PlacementRow>& rows, const Strategy& strategy,
                                    const AutoPlacementOptions& automatic, const Cluster& cluster);

/// The comparison as JSON (docs/placement.md, "Machine-readable output"): one entry per algorithm
/// with its step time, memory verdicts and op -> device map, or why it found no placement.
Json placement_report(const Scenario& scenario, const Strategy& strategy, const Cluster& cluster,
                      const std::vector<PlacementRow>& rows, const PlacementRow* shown, double memory_fraction);

}  // namespace placesim
