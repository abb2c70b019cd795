#include "sim/plan/bandwidth_ring.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace placesim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// Depth-first steps the search may take over all thresholds before it gives up (a 16-member
/// group of a machine with few fast links could otherwise enumerate for long); 8 GPUs of a DGX-1
/// need a few dozen.
constexpr int64_t kSearchSteps = 2'000'000;

/// Whether a cycle through every member, from member 0, uses only hops of at most `limit`
/// (distance[i][j], the routing metric from member i to member j); fills `cycle` (member indices)
/// if so. Members are tried in group order. `steps` counts down the search's budget.
bool find_cycle(const std::vector<std::vector<double>>& distance, double limit, std::vector<size_t>* cycle,
                std::vector<bool>* used, int64_t* steps) {
  const size_t n = distance.size();
  const size_t last = cycle->back();
  if (cycle->size() == n) return distance[last][0] <= limit;
  for (size_t next = 1; next < n; ++next) {
    if ((*used)[next] || distance[last][next] > limit) continue;
    if (--*steps < 0) return false;
    (*used)[next] = true;
    cycle->push_back(next);
    if (find_cycle(distance, limit, cycle, used, steps)) return true;
    cycle->pop_back();
    (*used)[next] = false;
  }
  return false;
}

}  // namespace

std::optional<std::vector<DeviceId>> bandwidth_ring(const std::vector<DeviceId>& group,
                                                    const std::vector<DeviceId>& walked, const Cluster& cluster) {
  const size_t n = group.size();
  if (n < 4 || n > kMaxBandwidthRingMembers || walked.size() != n) return std::nullopt;
  std::vector<bool> wanted(cluster.devices().size(), false);
  for (DeviceId d : group) {
    if (wanted[d] || cluster.device(d).node != cluster.device(group.front()).node) return std::nullopt;
    wanted[d] = true;
  }
  // The routing metric between members (the walk's: latency + 1 MiB / bandwidth over the hops),
  // one search from each member over the regions where members are.
  std::vector<size_t> member_of(cluster.devices().size(), n);
  for (size_t i = 0; i < n; ++i) member_of[group[i]] = i;
  std::vector<std::vector<double>> distance(n, std::vector<double>(n, kInfinity));
  for (size_t i = 0; i < n; ++i) {
    size_t found = 0;
    cluster.visit_devices_by_distance(
        group[i],
        [&](DeviceId device, double metric) {
          if (member_of[device] < n && distance[i][member_of[device]] == kInfinity) {
            distance[i][member_of[device]] = metric;
            ++found;
          }
          return found < n - 1;
        },
        &wanted, &group);
  }
  // The walk's ring is as good as any where its farthest hop is no farther than some member's
  // nearest other member: every ring leaves that member by a hop at least that far.
  double walked_farthest = 0, nearest_bound = 0;
  for (size_t k = 0; k < n; ++k) {
    const size_t a = member_of[walked[k]], b = member_of[walked[(k + 1) % n]];
    if (a >= n || b >= n) return std::nullopt;  // not a ring over this group
    walked_farthest = std::max(walked_farthest, distance[a][b]);
  }
  std::vector<double> limits;
  for (size_t i = 0; i < n; ++i) {
    double nearest = kInfinity;
    for (size_t j = 0; j < n; ++j) {
      if (j != i) nearest = std::min(nearest, distance[i][j]);
      if (j != i && distance[i][j] < walked_farthest) limits.push_back(distance[i][j]);
    }
    nearest_bound = std::max(nearest_bound, nearest);
  }
  if (walked_farthest <= nearest_bound * (1 + 1e-12)) return std::nullopt;
  // The lowest limit on the farthest hop at which a cycle exists: limits from the lowest up.
  std::sort(limits.begin(), limits.end());
  limits.erase(std::unique(limits.begin(), limits.end()), limits.end());
  int64_t steps = kSearchSteps;
  for (double limit : limits) {
    if (limit < nearest_bound) continue;
    std::vector<size_t> cycle{0};
    std::vector<bool> used(n, false);
    used[0] = true;
    if (find_cycle(distance, limit, &cycle, &used, &steps)) {
      std::vector<DeviceId> ring;
      for (size_t member : cycle) ring.push_back(group[member]);
      return ring;
    }
    if (steps < 0) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace placesim
