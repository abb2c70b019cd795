// The ring NCCL's topology search finds inside one machine: a cycle through every member of the
// group whose slowest hop is as fast as any cycle's, where the nearest-neighbour walk's is not.
// NCCL 2.x searches its rings over NVLink (src/graph/search.cc, ncclTopoCompute: the highest
// bandwidth at which every GPU can be chained); on a DGX-1's hybrid cube-mesh the walk from GPU 0
// (0-1-2-3-7-4-5-6) closes over PCIe and the CPUs' QPI, where 0-1-5-4-7-6-2-3 stays on NVLink.
#pragma once

#include <optional>
#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// Groups of more members are left to the walk (a machine holds at most 16 GPUs in every bundled
/// cluster; the search's cost grows with the cycles it must rule out).
constexpr size_t kMaxBandwidthRingMembers = 16;

/// A ring over `group`, every member in one machine (ClusterDevice::node) and at most
/// kMaxBandwidthRingMembers of them, whose farthest hop by the routing metric is nearer than
/// that of `walked` (the walk's ring over the same group), or nullopt where none is (the walk's
/// ring is already as good, the group spans machines, or it is too large). Starts at
/// group.front(); among the rings of the nearest farthest hop, the first a depth-first search in
/// group order finds. The caller compares the two rings' collective costs (topology_ring).
std::optional<std::vector<DeviceId>> bandwidth_ring(const std::vector<DeviceId>& group,
                                                    const std::vector<DeviceId>& walked, const Cluster& cluster);

}  // namespace placesim
