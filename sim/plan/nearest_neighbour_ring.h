// The nearest-neighbour walk that orders a collective's ring by the topology, as NCCL searches
// for rings over NVLink: from the first member, repeatedly the nearest unplaced member by the
// routing metric (the sum over hops of latency + 1 MiB / bandwidth; distances within 1e-12 of
// each other tie, and ties go to the earliest in group order); members the rest cannot reach
// follow in group order. One nearest-first network search per member: about members^2 heap
// operations on a fat tree, where every search pops each leaf that still holds a member.
// sim/plan/region_ring.h finds the same ring faster where the network's regions allow.
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// Distances within this factor of each other tie in the walk (relative).
constexpr double kRingTieRelative = 1e-12;

/// The walk's ring over `group` (which it reorders; group.front() stays first). Caches each
/// hop's route in the cluster (Cluster::remember_visited_route). Not thread-safe.
std::vector<DeviceId> nearest_neighbour_ring(const std::vector<DeviceId>& group, const Cluster& cluster);

}  // namespace placesim
