#include "sim/plan/nearest_neighbour_ring.h"

#include <limits>

namespace placesim {

std::vector<DeviceId> nearest_neighbour_ring(const std::vector<DeviceId>& group, const Cluster& cluster) {
  if (group.empty()) return group;
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> position(cluster.devices().size(), kNone);  // unvisited group members
  for (size_t i = 0; i < group.size(); ++i) {
    if (position[group[i]] == kNone) position[group[i]] = i;
  }
  std::vector<bool> wanted(cluster.devices().size(), false);  // unvisited members
  for (DeviceId d : group) wanted[d] = true;
  std::vector<DeviceId> ring{group.front()};
  position[group.front()] = kNone;
  wanted[group.front()] = false;
  std::vector<bool> placed_index(group.size(), false);
  placed_index[0] = true;
  size_t next_unplaced = 1;  // lowest group index not yet in the ring
  for (size_t placed = 1; placed < group.size(); ++placed) {
    // The nearest unvisited member; among equally near ones the first in group order.
    size_t best = kNone;
    double best_distance = std::numeric_limits<double>::infinity();
    cluster.visit_devices_by_distance(ring.back(), [&](DeviceId device, double distance) {
      if (best != kNone && distance > best_distance * (1 + kRingTieRelative)) return false;
      const size_t index = position[device];
      if (index != kNone && (best == kNone || index < best)) {
        best = index;
        best_distance = distance;
      }
      return true;
    }, &wanted, &group);  // the unplaced members are among the group's
    if (best == kNone) {  // the rest is unreachable from here: keep group order
      while (placed_index[next_unplaced]) ++next_unplaced;
      best = next_unplaced;
    } else {
      cluster.remember_visited_route(ring.back(), group[best]);  // the ring's hop: no second search
    }
    placed_index[best] = true;
    position[group[best]] = kNone;
    wanted[group[best]] = false;
    ring.push_back(group[best]);
  }
  return ring;
}

}  // namespace placesim
