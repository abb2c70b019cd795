// The sweep's answer: the cheapest configuration (cost to train) that fits in memory, meets the
// target and stays within the budget, with the reason in words; and the ranking used to pick
// the configurations the analytical tier's first pass sends to the full simulation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/sweep/sweep_outcome.h"

namespace placesim {

struct Recommendation {
  std::optional<size_t> index;  ///< configuration index; nullopt when none is acceptable
  std::string reason;
};

/// Configurations that fit, best first: acceptable ones (target and budget met) before the
/// others, then by cost to train, time to train, and index.
std::vector<size_t> rank_configurations(const std::vector<SweepOutcome>& outcomes);

/// Picks the first of the ranking when it is acceptable, sets its `recommended`, and says why
/// (or why nothing qualifies: what the closest candidates miss).
Recommendation recommend(const SweepSpec& spec, std::vector<SweepOutcome>* outcomes);

}  // namespace placesim
