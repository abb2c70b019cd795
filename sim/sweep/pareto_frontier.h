// The Pareto frontier of a sweep: the configurations no other beats on both cost to train and
// time to train (lower is better for both).
#pragma once

#include <vector>

#include "sim/sweep/sweep_outcome.h"

namespace placesim {

struct CostTimePoint {
  double usd = 0;
  double seconds = 0;
};

/// For each point, whether no other point is at most as costly and at most as slow and better
/// in one of them. Equal points are all on the frontier.
std::vector<bool> pareto_frontier(const std::vector<CostTimePoint>& points);

/// Sets `pareto` on the outcomes that fit in memory and are on their frontier.
void mark_pareto_frontier(std::vector<SweepOutcome>* outcomes);

}  // namespace placesim
