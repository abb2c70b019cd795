// The rings of NCCL's channels inside one machine: after the topology ring, more rings at its rate
// over the link directions it leaves free, each a channel carrying its share of the collective.
// NCCL 2.x searches as many rings as the NVLinks carry at one speed (src/graph/search.cc,
// ncclTopoCompute: each ring takes its speed from every link it crosses); on a DGX-1's hybrid
// cube-mesh that is every GPU's every NVLink, each way.
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// NCCL searches at most MAXCHANNELS / 2 = 16 rings inside a machine (src/graph/search.cc).
constexpr size_t kMaxChannelRings = 16;

/// The rings a collective over `group` runs at once: `first` (the topology ring over the group),
/// then, in turn, the first cycle through every member (a depth-first search from group.front(),
/// members in group order) each of whose hops leaves room for `rate_bytes_per_second` on every
/// link direction of its route, after what the rings before it take there (each ring takes that
/// rate from each direction it crosses, once per crossing), and whose route latency is at most
/// the slowest of `first`'s hops. Only where every member is a GPU of one machine (NCCL's
/// channels; CPUs run one ring) and the group has 3 to kMaxBandwidthRingMembers members; else
/// just {first}. `rate_bytes_per_second`: the rate one ring of `first` moves at
/// (concurrent_ring_costs). At most kMaxChannelRings rings.
std::vector<std::vector<DeviceId>> channel_rings(const std::vector<DeviceId>& group, const std::vector<DeviceId>& first,
                                                 double rate_bytes_per_second, const Cluster& cluster);

}  // namespace placesim
