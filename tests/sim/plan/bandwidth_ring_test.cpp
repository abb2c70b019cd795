// Rings inside one machine (sim/plan/bandwidth_ring.h): on a DGX-1 the nearest-neighbour walk
// closes its ring over the CPUs' QPI, NCCL 2.x's search keeps it on NVLink, NCCL 1.x's ring in
// device order crosses the QPI twice; on NVSwitch machines and across machines the walk's ring
// stays. Every time below is derived by hand from hardware_profiles/links.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "sim/plan/bandwidth_ring.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/nearest_neighbour_ring.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

Cluster cluster_of(const std::string& template_name, int nodes) {
  const std::string fabric = nodes > 1 ? R"(, "fabric": {"link": "ib_hdr"})" : "";
  return testing::scenario_from_text(R"({"model": {"zoo": "mlp"}, "cluster": {"template": ")" + template_name +
                                     R"(", "nodes": )" + std::to_string(nodes) + fabric +
                                     R"(}, "strategy": {"data_parallel": {"replicas": 2}}})")
      .cluster;
}

/// The first `count` GPUs of machine `node`, in the template's order (GPU:0, GPU:1, ...).
std::vector<DeviceId> gpus(const Cluster& cluster, int node, int count) {
  std::vector<DeviceId> ids;
  for (DeviceId id = 0; id < cluster.devices().size() && ids.size() < static_cast<size_t>(count); ++id) {
    if (cluster.device(id).spec.kind == DeviceKind::kGpu && cluster.device(id).node == node) ids.push_back(id);
  }
  return ids;
}

/// The DGX-1's NVLink pairs (hardware_profiles/clusters/dgx1_p100.json, the hybrid cube-mesh).
const std::set<std::pair<int, int>> kNvlinks = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {4, 5}, {4, 6},
                                                {4, 7}, {5, 6}, {5, 7}, {6, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};

// DGX-1 P100, 8 GPUs. The walk from GPU 0 takes the nearest unvisited GPU, the lowest index among
// equals: 0-1-2-3-7-4-5-6, and 6 -> 0 has no NVLink (GPUs forward nothing): PCIe, CPU 1, QPI,
// CPU 0, PCIe, 5 hops, its narrowest the QPI at 6 GB/s. A depth-first search in device order
// over NVLink hops only finds 0-1-2-3-7-5-6-4 (from 7: 4, then 5, 6 dead-end at 6 -> 0; then 5,
// 4 -> 6 -> 0 no; 5, 6, 4 -> 0 yes): every hop one NVLink 1.0 link, 18 GB/s and 1 us.
// A ring all-reduce of S = 64 MiB over that ring alone: 2 (n - 1) latency + 2 (n - 1) / n S / B
// = 14 x 1 us + 1.75 x 67,108,864 / 18e9 = 6.5384 ms (NCCL 2.x runs four such rings at once, its
// channels: ring_channels_test.cpp). NCCL 1.x's ring in device order (0-1-...-7), its only one,
// crosses the QPI at 3 -> 4 and 7 -> 0 (one each way): each round waits on the hops a chunk travels,
// their mean latency (6 NVLinks of 1 us, 2 QPI routes of 5 us: 2 us), and the QPI's rate:
// 14 x 2 us + 1.75 x 67,108,864 / 6e9 = 19.6014 ms.
TEST(BandwidthRing, OnADgx1NcclsSearchStaysOnNvlinkWhereTheWalkAndNccl1CrossTheQpi) {
  const Cluster cluster = cluster_of("dgx1_p100", 1);
  const std::vector<DeviceId> group = gpus(cluster, 0, 8);
  auto indices = [&](const std::vector<DeviceId>& ring) {
    std::vector<int> out;
    for (DeviceId d : ring) out.push_back(static_cast<int>(std::find(group.begin(), group.end(), d) - group.begin()));
    return out;
  };
  const std::vector<DeviceId> walked = nearest_neighbour_ring(group, cluster);
  EXPECT_EQ(indices(walked), (std::vector<int>{0, 1, 2, 3, 7, 4, 5, 6}));
  EXPECT_DOUBLE_EQ(cluster.route_bandwidth_bytes_per_second(walked.back(), walked.front()), 6e9);

  const std::vector<DeviceId> ring = topology_ring(group, cluster);
  EXPECT_EQ(indices(ring), (std::vector<int>{0, 1, 2, 3, 7, 5, 6, 4}));
  for (size_t i = 0; i < ring.size(); ++i) {
    const int a = indices(ring)[i], b = indices(ring)[(i + 1) % ring.size()];
    EXPECT_TRUE(kNvlinks.count({std::min(a, b), std::max(a, b)})) << a << " -> " << b;
  }
  const double bytes = 64.0 * 1024 * 1024;
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRingInRankOrder, ring, bytes,
                                          cluster),
              14 * 1e-6 + 1.75 * bytes / 18e9, 1e-9);
  EXPECT_EQ(ring_of(CollectiveAlgorithm::kRingInRankOrder, group, cluster), group);
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRingInRankOrder, group, bytes,
                                          cluster),
              14 * (6 * 1e-6 + 2 * 5e-6) / 8 + 1.75 * bytes / 6e9, 1e-9);
  // The engines run the same rings: the schedule's first pass follows the searched ring's hops
  // (then the other three channels': every NVLink each way, 32 hops).
  const std::vector<CollectiveStep> steps =
      allreduce_schedule(CollectiveAlgorithm::kRing, group, bytes, cluster, CollectiveFidelity::kPerPhase);
  ASSERT_FALSE(steps.empty());
  std::set<std::pair<DeviceId, DeviceId>> hops;
  for (const CollectiveStep& step : steps) hops.insert({step.from, step.to});
  for (size_t i = 0; i < ring.size(); ++i) EXPECT_TRUE(hops.count({ring[i], ring[(i + 1) % ring.size()]}));
  EXPECT_EQ(hops.size(), 4 * ring.size());
  for (size_t i = 0; i < ring.size(); ++i) EXPECT_EQ(steps[i].from, ring[i]);
}

// On NVSwitch every pair of GPUs is two equal hops: the walk's ring is as good as any and stays
// (no search). Across machines the search leaves the ring to the walk (and region_ring).
TEST(BandwidthRing, LeavesTheWalksRingOnNvswitchAndAcrossMachines) {
  const Cluster a100 = cluster_of("dgx_a100", 2);
  const std::vector<DeviceId> local = gpus(a100, 0, 8);
  EXPECT_FALSE(bandwidth_ring(local, nearest_neighbour_ring(local, a100), a100));
  EXPECT_EQ(topology_ring(local, a100), nearest_neighbour_ring(local, a100));
  std::vector<DeviceId> both = gpus(a100, 0, 4);
  for (DeviceId d : gpus(a100, 1, 4)) both.push_back(d);
  EXPECT_FALSE(bandwidth_ring(both, nearest_neighbour_ring(both, a100), a100));
  // Three members: one cycle each way, nothing to search.
  const Cluster dgx1 = cluster_of("dgx1_p100", 1);
  const std::vector<DeviceId> three = {gpus(dgx1, 0, 8)[0], gpus(dgx1, 0, 8)[6], gpus(dgx1, 0, 8)[5]};
  EXPECT_FALSE(bandwidth_ring(three, three, dgx1));
}

}  // namespace
}  // namespace placesim
