// The rings of NCCL's channels: inside one machine, after the topology ring, more rings at its rate
// over the link directions it leaves free, each a channel carrying its share of the collective;
// across machines, one ring through every GPU per GPU of a machine (machine_channel_rings).
// NCCL 2.x searches as many rings as the NVLinks carry at one speed (src/graph/search.cc,
// ncclTopoCompute: each ring takes its speed from every link it crosses); on a DGX-1's hybrid
// cube-mesh that is every GPU's every NVLink, each way.
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// NCCL searches at most MAXCHANNELS / 2 = 16 rings inside a machine (src/graph/search.cc).
constexpr size_t kMaxChannelRings = 16;

/// NCCL runs at most MAXCHANNELS = 64 channels (src/include/device.h).
constexpr size_t kMaxChannels = 64;

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

/// NCCL's rings across machines: one ring through every member of every machine, machines in
/// the order given, each machine's members in its order (`machine_orders[m]`, a ring over that
/// machine's members: its topology ring; the same number of members on every machine), so that a
/// ring leaves each machine once, from its last member there to the next machine's first, all
/// its hops at once. One channel per member (at most kMaxChannels): channel k turns every
/// machine's order to leave from its k-th member and enter at its (k+1)-th, so that each member
/// sends out of its machine on one channel and receives into it on one: NCCL's channels leave a
/// machine through each of its network cards alike (its rings across machines start and end at a
/// NIC, src/graph/search.cc). Empty when the machines differ or hold fewer than 2 members each.
std::vector<std::vector<DeviceId>> machine_channel_rings(const std::vector<std::vector<DeviceId>>& machine_orders);

}  // namespace placesim
