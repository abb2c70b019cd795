#include "sim/sweep/pareto_frontier.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace placesim {

std::vector<bool> pareto_frontier(const std::vector<CostTimePoint>& points) {
  // Sorted by cost, then time: a point is on the frontier when it is faster than every cheaper
  // point seen so far (or ties the fastest with the same cost and time).
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].usd != points[b].usd ? points[a].usd < points[b].usd : points[a].seconds < points[b].seconds;
  });
  std::vector<bool> on_frontier(points.size(), false);
  double best_seconds = std::numeric_limits<double>::infinity();
  CostTimePoint best{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  for (size_t i : order) {
    const CostTimePoint& p = points[i];
    if (p.seconds < best_seconds) {
      on_frontier[i] = true;
      best_seconds = p.seconds;
      best = p;
    } else if (p.seconds == best.seconds && p.usd == best.usd) {
      on_frontier[i] = true;  // a duplicate of a frontier point
    }
  }
  return on_frontier;
}

void mark_pareto_frontier(std::vector<SweepOutcome>* outcomes) {
  std::vector<CostTimePoint> points;
  std::vector<size_t> which;
  for (size_t i = 0; i < outcomes->size(); ++i) {
    SweepOutcome& outcome = (*outcomes)[i];
    outcome.pareto = false;
    if (!outcome.fits() || outcome.row().samples_per_second <= 0) continue;
    points.push_back({outcome.usd_to_train, outcome.time_to_train_seconds});
    which.push_back(i);
  }
  std::vector<bool> frontier = pareto_frontier(points);
  for (size_t k = 0; k < which.size(); ++k) (*outcomes)[which[k]].pareto = frontier[k];
}

}  // namespace placesim
