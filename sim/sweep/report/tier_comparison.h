// TierComparison: one configuration's step on two tiers where both ran, for the reports'
// "Analytical tier vs simulation" and "Search tier vs analytical tier" tables.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/sweep_outcome.h"

namespace placesim {

struct TierComparison {
  std::string title;          ///< "Analytical tier vs simulation"
  std::string first, second;  ///< the columns: "analytical step", "simulated step"
  struct Row {
    const SweepOutcome* outcome = nullptr;
    double first_seconds = 0, second_seconds = 0;
    double difference_percent = 0;  ///< (first - second) / second
  };
  std::vector<Row> rows;  ///< in index order
};

/// Analytical vs simulated (re-checks), then search vs analytical (a search's best); a
/// comparison without rows is left out.
std::vector<TierComparison> tier_comparisons(const std::vector<SweepOutcome>& outcomes);

}  // namespace placesim
