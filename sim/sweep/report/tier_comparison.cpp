#include "sim/sweep/report/tier_comparison.h"

namespace placesim {

std::vector<TierComparison> tier_comparisons(const std::vector<SweepOutcome>& outcomes) {
  TierComparison simulation{"Analytical tier vs simulation", "analytical step", "simulated step", {}};
  TierComparison search{"Search tier vs analytical tier", "search step", "analytical step", {}};
  for (const SweepOutcome& o : outcomes) {
    if (auto error = o.analytical_error_percent()) {
      simulation.rows.push_back({&o, o.analytical->step_seconds, o.simulated->step_seconds, *error});
    }
    if (auto error = o.search_error_percent()) {
      search.rows.push_back({&o, o.searched->step_seconds, o.analytical->step_seconds, *error});
    }
  }
  std::vector<TierComparison> comparisons;
  for (TierComparison* comparison : {&simulation, &search}) {
    if (!comparison->rows.empty()) comparisons.push_back(std::move(*comparison));
  }
  return comparisons;
}

}  // namespace placesim
