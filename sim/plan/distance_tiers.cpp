#include "sim/plan/distance_tiers.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace placesim {

double DistanceTiers::tier(double distance_seconds) {
  auto above = tiers_.lower_bound(distance_seconds);
  const double* nearest = nullptr;
  double nearest_gap = 0;
  auto consider = [&](std::set<double>::const_iterator it) {
    const double gap = std::fabs(*it - distance_seconds);
    if (!nearest || gap < nearest_gap) {
      nearest = &*it;
      nearest_gap = gap;
    }
    if (gap > kTieRelative * std::min(*it, distance_seconds) && gap <= separation_seconds_) ambiguous_ = true;
  };
  if (above != tiers_.end()) consider(above);
  if (above != tiers_.begin()) consider(std::prev(above));
  if (nearest && nearest_gap <= kTieRelative * std::min(*nearest, distance_seconds)) return *nearest;
  tiers_.insert(distance_seconds);
  return distance_seconds;
}

}  // namespace placesim
