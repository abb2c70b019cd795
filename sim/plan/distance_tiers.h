// DistanceTiers: route distances (seconds of the routing metric) snapped to tiers, so that two
// sums of the same hops taken in another order compare equal, while distances that truly differ
// compare apart by more than any tolerance of the nearest-neighbour walk could bridge. A distance
// within kTieRelative of a tier joins it; one farther from every tier than `separation_seconds`
// opens a new tier; one in between makes the tiers ambiguous(), and the caller must not trust
// the comparisons it made. Not thread-safe.
#pragma once

#include <set>

namespace placesim {

class DistanceTiers {
 public:
  /// Rounding of a handful of additions is ~1e-15 relative; the walk ties within kRingTieRelative (1e-12).
  static constexpr double kTieRelative = 1e-13;

  explicit DistanceTiers(double separation_seconds) : separation_seconds_(separation_seconds) {}

  /// The tier `distance_seconds` belongs to (its first member's value), opening one if needed.
  double tier(double distance_seconds);
  /// Whether some distance fell between "equal" and "apart" (see above).
  bool ambiguous() const { return ambiguous_; }

 private:
  double separation_seconds_;
  std::set<double> tiers_;
  bool ambiguous_ = false;
};

}  // namespace placesim
