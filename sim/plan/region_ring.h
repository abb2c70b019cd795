// The nearest-neighbour ring of sim/plan/nearest_neighbour_ring.h, found through the cluster's
// dead-end regions (Cluster::region_of) instead of one network search per member: the same ring,
// member for member, in O(members x log members) after a few small searches per member, where the
// walk costs about members^2 heap operations (512 rings of 1,562 GPUs on 100,000 DGX A100 nodes:
// more than 15 minutes).
//
// Why it is the same ring. A region hangs off one vertex, its attach vertex, so every route
// between a member inside it and one outside passes through that vertex. The walk's distance
// from c to u therefore splits at the attach vertices on the way: c up to the region that holds
// both, across it, and down to u. The nearest unplaced member of a region, seen from its attach
// vertex, does not depend on where the walk stands, so each region keeps its own and passes it
// up when a member is placed. Sums of the same hops in another order may differ in the last
// bits, where the walk's search sees one distance: every distance compared here is snapped to a
// tier (equal to 1e-13, relative, or apart by 1e-9 of the largest distance, which the walk's
// 1e-12 tolerance cannot bridge), and a distance in between gives up the fast path.
//
// Gives up (region_ring returns nullopt, and the caller walks) on duplicate members, where a
// step finds no member reachable (the walk then keeps group order), where a region that holds
// members hangs off a GPU (routes do not pass through one), where one region holds more than
// kMaxRegionMembers members of its own or the regions inside it that hold members hang off more
// than kMaxAttachVertices vertices (each pair's distance is kept), and where a distance is
// ambiguous (above). Fat trees of the bundled templates never do.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// Distinct vertices that the regions holding members hang off, within one region.
constexpr size_t kMaxAttachVertices = 64;
/// Members in one region outside the regions inside it.
constexpr size_t kMaxRegionMembers = 256;

/// The nearest-neighbour ring over `group` (first member first; then repeatedly the nearest
/// unplaced member by the routing metric, ties to the earliest in group order), or nullopt
/// where the cluster's regions do not give it exactly (see above). Not thread-safe (searches
/// the cluster, like Cluster::route).
std::optional<std::vector<DeviceId>> region_ring(const std::vector<DeviceId>& group, const Cluster& cluster);

}  // namespace placesim
