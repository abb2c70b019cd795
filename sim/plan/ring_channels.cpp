#include "sim/plan/ring_channels.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "sim/plan/bandwidth_ring.h"

namespace placesim {
namespace {

/// Depth-first steps the searches of one group may take together before they stop adding rings
/// (8 GPUs of a DGX-1 need a few hundred).
constexpr int64_t kChannelSearchSteps = 1'000'000;

/// Whether a ring may hop from a to b: a route no slower to start than `latency_limit` (the first
/// ring's slowest hop).
bool hop_within(DeviceId a, DeviceId b, double latency_limit, const Cluster& cluster) {
  return a != b && cluster.reachable(a, b) && cluster.route_latency_seconds(a, b) <= latency_limit * (1 + 1e-12);
}

/// What the search reads: the residual rate of each link direction and the routes between members.
class ChannelSearch {
 public:
  ChannelSearch(const std::vector<DeviceId>& group, double rate, double latency_limit, const Cluster& cluster)
      : n_(group.size()), rate_(rate) {
    const size_t n = group.size();
    allowed_.assign(n, std::vector<bool>(n, false));
    hops_.assign(n, std::vector<std::vector<size_t>>(n));
    std::map<size_t, size_t> slot;  // link direction -> index in residual_: only those between members
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        allowed_[i][j] = hop_within(group[i], group[j], latency_limit, cluster);
        if (!allowed_[i][j]) continue;
        for (const RouteHop& hop : cluster.route(group[i], group[j])) {
          const size_t direction = 2 * hop.link + (hop.a_to_b ? 1 : 0);
          auto [it, added] = slot.emplace(direction, residual_.size());
          if (added) residual_.push_back(cluster.links()[hop.link].spec.bandwidth_bytes_per_second);
          hops_[i][j].push_back(it->second);
        }
      }
    }
  }

  /// Takes the ring's rate from every direction its hops cross (a ring over the group's members,
  /// by member index, each hop allowed).
  void take(const std::vector<size_t>& ring) {
    for (size_t k = 0; k < ring.size(); ++k) move(ring[k], ring[(k + 1) % ring.size()], -rate_);
  }

  /// Whether the ring fits in what is left: every hop allowed, room on every direction.
  bool fits(const std::vector<size_t>& ring) {
    for (size_t k = 0; k < ring.size(); ++k) {
      if (!allowed_[ring[k]][ring[(k + 1) % ring.size()]]) return false;
    }
    const std::vector<double> before = residual_;
    take(ring);
    const bool ok = std::all_of(residual_.begin(), residual_.end(), [&](double r) { return r >= -1e-9 * rate_; });
    residual_ = before;
    return ok;
  }

  /// The next ring at the rate over what is left (member indices, from member 0), if the search
  /// finds one within its budget.
  std::optional<std::vector<size_t>> next_ring() {
    std::vector<size_t> cycle{0};
    std::vector<bool> used(n_, false);
    used[0] = true;
    const std::vector<double> before = residual_;
    const bool found = extend(&cycle, &used);
    residual_ = before;
    if (!found) return std::nullopt;
    return cycle;
  }

 private:
  void move(size_t i, size_t j, double change) {
    for (size_t slot : hops_[i][j]) residual_[slot] += change;
  }

  /// Whether the hop from member i to member j fits, a direction its route crosses twice counted twice.
  bool hop_fits(size_t i, size_t j) {
    if (!allowed_[i][j]) return false;
    move(i, j, -rate_);
    bool ok = true;
    for (size_t slot : hops_[i][j]) ok = ok && residual_[slot] >= -1e-9 * rate_;
    move(i, j, rate_);
    return ok;
  }

  /// Extends `cycle` to a ring through every member; on success the cycle and the residual
  /// rates are left as the ring takes them (next_ring restores the rates).
  bool extend(std::vector<size_t>* cycle, std::vector<bool>* used) {
    const size_t last = cycle->back();
    if (cycle->size() == n_) return hop_fits(last, 0);
    for (size_t next = 1; next < n_; ++next) {
      if ((*used)[next] || !hop_fits(last, next)) continue;
      if (--steps_ < 0) return false;
      move(last, next, -rate_);
      (*used)[next] = true;
      cycle->push_back(next);
      if (extend(cycle, used)) return true;
      cycle->pop_back();
      (*used)[next] = false;
      move(last, next, rate_);
    }
    return false;
  }

  size_t n_;  ///< members
  double rate_;
  std::vector<double> residual_;                    ///< per link direction between members, bytes/s left
  std::vector<std::vector<std::vector<size_t>>> hops_;  ///< [i][j]: residual_ slots of i's route to j
  std::vector<std::vector<bool>> allowed_;
  int64_t steps_ = kChannelSearchSteps;
};

/// The rings at `rate`, from `first`: each ring, then the same cycle the other way where its
/// links carry it (an NVLink carries both ways at once): on links as fast each way, the cycles
/// left are then those over links no ring crosses yet, which a greedy search in one direction
/// would break up.
std::vector<std::vector<DeviceId>> rings_at(const std::vector<DeviceId>& group, const std::vector<DeviceId>& first,
                                            double rate, double latency_limit, const Cluster& cluster) {
  std::vector<std::vector<size_t>> rings;
  ChannelSearch search(group, rate, latency_limit, cluster);
  auto add = [&](std::vector<size_t> ring) {
    search.take(ring);
    rings.push_back(ring);
    std::reverse(ring.begin() + 1, ring.end());
    if (rings.size() < kMaxChannelRings && search.fits(ring)) {
      search.take(ring);
      rings.push_back(std::move(ring));
    }
  };
  std::vector<size_t> first_members;
  for (DeviceId d : first) {
    first_members.push_back(static_cast<size_t>(std::find(group.begin(), group.end(), d) - group.begin()));
  }
  add(first_members);
  while (rings.size() < kMaxChannelRings) {
    std::optional<std::vector<size_t>> ring = search.next_ring();
    if (!ring) break;
    add(std::move(*ring));
  }
  std::vector<std::vector<DeviceId>> result;
  for (const auto& ring : rings) {
    result.emplace_back();
    for (size_t member : ring) result.back().push_back(group[member]);
  }
  return result;
}

}  // namespace

std::vector<std::vector<DeviceId>> channel_rings(const std::vector<DeviceId>& group, const std::vector<DeviceId>& first,
                                                 double rate_bytes_per_second, const Cluster& cluster) {
  std::vector<std::vector<DeviceId>> best{first};
  const size_t n = group.size();
  if (n < 3 || n > kMaxBandwidthRingMembers || first.size() != n || !(rate_bytes_per_second > 0)) return best;
  for (DeviceId d : group) {
    const ClusterDevice& device = cluster.device(d);
    if (device.spec.kind != DeviceKind::kGpu || device.node != cluster.device(group.front()).node) return best;
  }
  double latency_limit = 0;
  for (size_t k = 0; k < n; ++k) {
    latency_limit = std::max(latency_limit, cluster.route_latency_seconds(first[k], first[(k + 1) % n]));
  }
  // Rates to search at, as NCCL lowers its speed while that finds more bandwidth in all: the
  // first ring's, and every slower link's on a route between two members (a DGX-1 V100's
  // doubled NVLinks make one cycle at 40 GB/s each way, its single links three at 20).
  std::set<double, std::greater<>> rates{rate_bytes_per_second};
  for (DeviceId a : group) {
    for (DeviceId b : group) {
      if (!hop_within(a, b, latency_limit, cluster)) continue;
      for (const RouteHop& hop : cluster.route(a, b)) {
        const double bandwidth = cluster.links()[hop.link].spec.bandwidth_bytes_per_second;
        if (bandwidth < rate_bytes_per_second) rates.insert(bandwidth);
      }
    }
  }
  double best_total = rate_bytes_per_second;
  for (double rate : rates) {
    std::vector<std::vector<DeviceId>> rings = rings_at(group, first, rate, latency_limit, cluster);
    const double total = static_cast<double>(rings.size()) * rate;
    if (total > best_total * (1 + 1e-12)) {
      best_total = total;
      best = std::move(rings);
    }
  }
  return best;
}

std::vector<std::vector<DeviceId>> machine_channel_rings(const std::vector<std::vector<DeviceId>>& machine_orders) {
  if (machine_orders.size() < 2) return {};
  const size_t members = machine_orders.front().size();
  for (const auto& order : machine_orders) {
    if (order.size() != members) return {};
  }
  if (members < 2) return {};
  const size_t channels = std::min(members, kMaxChannels);
  std::vector<std::vector<DeviceId>> result;
  for (size_t k = 0; k < channels; ++k) {
    std::vector<DeviceId> ring;
    ring.reserve(members * machine_orders.size());
    for (const auto& order : machine_orders) {
      for (size_t i = 1; i <= members; ++i) ring.push_back(order[(k + i) % members]);  // leaves from order[k]
    }
    result.push_back(std::move(ring));
  }
  return result;
}

}  // namespace placesim
