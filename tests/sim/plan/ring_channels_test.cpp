// NCCL's channels inside one machine (sim/plan/ring_channels.h): as many rings at the first
// ring's rate as the links carry, each cycle both ways. Every count and time below is derived by
// hand from the cluster templates and hardware_profiles/links.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "sim/plan/collective_schedule.h"
#include "sim/plan/ring_channels.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

Cluster cluster_of(const std::string& template_name) { return testing::template_cluster(template_name); }

std::vector<DeviceId> gpus(const Cluster& cluster, size_t count) { return testing::first_gpus(cluster, count); }

/// How many rings leave each GPU over each link direction: (from, to) GPU index pairs -> rings.
std::map<std::pair<size_t, size_t>, int> hops_per_pair(const std::vector<std::vector<DeviceId>>& rings,
                                                       const std::vector<DeviceId>& group) {
  std::map<std::pair<size_t, size_t>, int> count;
  auto index = [&](DeviceId d) { return static_cast<size_t>(std::find(group.begin(), group.end(), d) - group.begin()); };
  for (const auto& ring : rings) {
    EXPECT_EQ(std::set<DeviceId>(ring.begin(), ring.end()), std::set<DeviceId>(group.begin(), group.end()));
    for (size_t k = 0; k < ring.size(); ++k) ++count[{index(ring[k]), index(ring[(k + 1) % ring.size()])}];
  }
  return count;
}

/// Each NVLink pair of a machine as (lower, higher) GPU index -> bricks.
using Bricks = std::map<std::pair<size_t, size_t>, int>;

/// Every ring crosses only NVLink pairs, and each direction of a pair carries as many rings as the
/// pair has bricks (each ring takes one brick's rate): the links' every direction is used.
void expect_every_brick_each_way_carries_one_ring(const std::vector<std::vector<DeviceId>>& rings,
                                                  const std::vector<DeviceId>& group, const Bricks& bricks) {
  const auto hops = hops_per_pair(rings, group);
  for (const auto& [pair, rings_over] : hops) {
    const auto key = std::make_pair(std::min(pair.first, pair.second), std::max(pair.first, pair.second));
    ASSERT_TRUE(bricks.count(key)) << pair.first << " -> " << pair.second << " is no NVLink";
    EXPECT_EQ(rings_over, bricks.at(key)) << pair.first << " -> " << pair.second;
  }
  EXPECT_EQ(hops.size(), 2 * bricks.size());
}

// DGX-1 P100 (hardware_profiles/clusters/dgx1_p100.json): 4 NVLink 1.0 bricks per GPU, one per
// pair of the hybrid cube-mesh, 18 GB/s each way. The searched ring 0-1-2-3-7-5-6-4 and its
// reverse; what it leaves of the cube-mesh's 16 pairs is the cycle 0-2-6-7-4-5-1-3 (by hand:
// 0: {2, 3}, 1: {3, 5}, 2: {0, 6}, 3: {0, 1}, 4: {5, 7}, 5: {1, 4}, 6: {2, 7}, 7: {4, 6}), each
// way: 4 rings, every brick each way. A ring all-reduce of S = 64 MiB, a quarter on each ring:
// 14 x 1 us + 1.75 x 67,108,864 / (4 x 18e9) = 1.6451 ms (one ring: 6.5384 ms).
TEST(RingChannels, ADgx1P100RunsFourRingsOverEveryNvlinkEachWay) {
  const Cluster cluster = cluster_of("dgx1_p100");
  const std::vector<DeviceId> group = gpus(cluster, 8);
  const auto rings = ring_channels_of(CollectiveAlgorithm::kRing, group, cluster);
  ASSERT_EQ(rings.size(), 4u);
  EXPECT_EQ(rings[0], topology_ring(group, cluster));
  expect_every_brick_each_way_carries_one_ring(
      rings, group,
      {{{0, 1}, 1}, {{0, 2}, 1}, {{0, 3}, 1}, {{1, 2}, 1}, {{1, 3}, 1}, {{2, 3}, 1}, {{4, 5}, 1}, {{4, 6}, 1},
       {{4, 7}, 1}, {{5, 6}, 1}, {{5, 7}, 1}, {{6, 7}, 1}, {{0, 4}, 1}, {{1, 5}, 1}, {{2, 6}, 1}, {{3, 7}, 1}});
  const double bytes = 64.0 * 1024 * 1024;
  const double expected = 14 * 1e-6 + 1.75 * bytes / (4 * 18e9);
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes, cluster),
              expected, 1e-9);
  // An all-gather or reduce-scatter: 7 x 1 us + 7/8 x S / (4 x 18e9).
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, group, bytes, cluster),
              7 * 1e-6 + 0.875 * bytes / (4 * 18e9), 1e-9);
  // The schedule: one pass per ring, a quarter of the buffer each (per phase: a step per hop).
  const auto steps = allreduce_schedule(CollectiveAlgorithm::kRing, group, bytes, cluster, CollectiveFidelity::kPerPhase);
  ASSERT_EQ(steps.size(), 4u * 8);
  for (const CollectiveStep& step : steps) EXPECT_DOUBLE_EQ(step.bytes, 14 * bytes / (8 * 4));
  EXPECT_EQ(allreduce_schedule(CollectiveAlgorithm::kRing, group, bytes, cluster).size(), 4u * 8 * 14);
  // NCCL 1.x's ring in device order stays one ring.
  EXPECT_EQ(ring_channels_of(CollectiveAlgorithm::kRingInRankOrder, group, cluster).size(), 1u);
}

// DGX-1 V100 (dgx1_v100.json): 6 NVLink 2.0 bricks per GPU, 22.55 GB/s each way (links.json,
// measured); 8 pairs have 2 bricks (one link of 45.1 GB/s here). At the first ring's rate, 45.1
// GB/s (0-3-2-1-5-6-7-4, all doubled pairs), that cycle each way: 2 x 45.1 = 90.2 GB/s. At 22.55
// GB/s, the same two rings (taking half of each doubled pair) and two more cycles each way over
// every brick left: 6 x 22.55 = 135.3 GB/s, as NCCL lowers its speed where that finds more. A
// 64 MiB all-reduce: 14 x 1 us + 1.75 x 67,108,864 / 135.3e9 = 0.88204 ms.
TEST(RingChannels, ADgx1V100RunsSixRingsAtOneBricksRate) {
  const Cluster cluster = cluster_of("dgx1_v100");
  const std::vector<DeviceId> group = gpus(cluster, 8);
  const auto rings = ring_channels_of(CollectiveAlgorithm::kRing, group, cluster);
  ASSERT_EQ(rings.size(), 6u);
  expect_every_brick_each_way_carries_one_ring(
      rings, group,
      {{{0, 1}, 1}, {{0, 2}, 1}, {{0, 3}, 2}, {{0, 4}, 2}, {{1, 2}, 2}, {{1, 3}, 1}, {{1, 5}, 2}, {{2, 3}, 2},
       {{2, 6}, 1}, {{3, 7}, 1}, {{4, 5}, 1}, {{4, 6}, 1}, {{4, 7}, 2}, {{5, 6}, 2}, {{5, 7}, 1}, {{6, 7}, 2}});
  const double bytes = 64.0 * 1024 * 1024;
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes, cluster),
              14 * 1e-6 + 1.75 * bytes / (6 * 22.55e9), 1e-9);
}

// Where every ring shares each GPU's one link (NVSwitch: a GPU's 12 NVLinks to the switches are
// one link here; PCIe: a GPU's lane to its switch), more rings move no more: one ring.
TEST(RingChannels, OneRingWhereEveryRingWouldShareEachGpusLink) {
  for (const char* name : {"dgx_a100", "dgx_h100", "p2_8xlarge"}) {
    SCOPED_TRACE(name);
    const Cluster cluster = cluster_of(name);
    const std::vector<DeviceId> group = gpus(cluster, 8);
    EXPECT_EQ(ring_channels_of(CollectiveAlgorithm::kRing, group, cluster).size(), 1u);
  }
  // Two GPUs: one exchange each way already.
  const Cluster dgx1 = cluster_of("dgx1_p100");
  EXPECT_EQ(ring_channels_of(CollectiveAlgorithm::kRing, gpus(dgx1, 2), dgx1).size(), 1u);
}

// NCCL's rings across machines (machine_channel_rings): two DGX H100s on NDR InfiniBand
// (dgx_h100.json: each GPU on the NVSwitch over nvswitch_h100, 370.8 GB/s each way, and on a PCIe
// switch over pcie5_x16, 48 GB/s, two GPUs and two NICs per PCIe switch, the NICs one link of
// 2 x ib_ndr = 96 GB/s to the fabric's switch). 8 channels, each a ring through all 16 GPUs that
// leaves each machine once, every GPU the one that leaves on exactly one channel and the one that
// enters on exactly one. Per channel the
// narrowest share: a GPU's NVSwitch link carries 7 channels' hops inside (370.8 / 7 = 53.0 GB/s),
// its PCIe link the one channel it sends out on (48 GB/s), the NIC link its switch's two (96 / 2
// = 48 GB/s): 48 GB/s, 384 GB/s over 8 channels. A round waits on the hops a chunk travels, their
// mean latency: 14 hops through the NVSwitch (2 x 1.5 us) and 2 between the machines (PCIe 1 us,
// ib_ndr 1.5 us to the switch and 1.5 us from it, PCIe 1 us: 5 us), (14 x 3 + 2 x 5) / 16 = 3.25 us.
// A ring all-reduce of S = 1 GiB: 2 (n - 1) x 3.25 us + 2 (n - 1) / n S / 384 GB/s, n = 16.
TEST(RingChannels, AcrossTwoDgxH100sEveryGpuLeavesOnceAndTheNicsSetThePace) {
  const Cluster cluster = testing::scenario_from_text(R"({"model": {"zoo": "mlp"},
      "cluster": {"template": "dgx_h100", "nodes": 2, "fabric": {"link": "ib_ndr"}},
      "strategy": {"data_parallel": {"replicas": 2}}})")
                              .cluster;
  const std::vector<DeviceId> group = gpus(cluster, 16);
  ASSERT_EQ(group.size(), 16u);
  const auto rings = ring_channels_of(CollectiveAlgorithm::kRing, group, cluster);
  ASSERT_EQ(rings.size(), 8u);
  std::set<DeviceId> leaving, entering;
  for (const auto& ring : rings) {
    ASSERT_EQ(ring.size(), 16u);
    EXPECT_EQ(std::set<DeviceId>(ring.begin(), ring.end()), std::set<DeviceId>(group.begin(), group.end()));
    int crossings = 0;
    for (size_t k = 0; k < ring.size(); ++k) {
      const DeviceId from = ring[k], to = ring[(k + 1) % ring.size()];
      if (cluster.device(from).node != cluster.device(to).node) {
        ++crossings;
        if (cluster.device(from).node == 0) leaving.insert(from);
        if (cluster.device(to).node == 0) entering.insert(to);
      }
    }
    EXPECT_EQ(crossings, 2);
  }
  EXPECT_EQ(leaving.size(), 8u);
  EXPECT_EQ(entering.size(), 8u);
  const double bytes = 1024.0 * 1024 * 1024, n = 16;
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes, cluster),
              2 * (n - 1) * 3.25e-6 + 2 * (n - 1) / n * bytes / (8 * 48e9), 1e-9);
  // The engine's per-phase schedule: each channel one step per hop (8 x 16), the 7 channels that
  // cross each hop inside a machine (its own NVSwitch links, no other hop's) as one step of their
  // bytes, 2 (n - 1) chunks of S / (n x 8) each: 16 such steps and the 16 hops between machines.
  const std::vector<CollectiveStep> steps =
      allreduce_schedule(CollectiveAlgorithm::kRing, group, bytes, cluster, CollectiveFidelity::kPerPhase);
  ASSERT_EQ(steps.size(), 32u);
  const double channel_bytes = 2 * (n - 1) * bytes / (n * 8);
  double total = 0;
  for (const CollectiveStep& step : steps) {
    const bool across = cluster.device(step.from).node != cluster.device(step.to).node;
    EXPECT_NEAR(step.bytes, (across ? 1 : 7) * channel_bytes, 1e-6 * channel_bytes);
    EXPECT_EQ(step.latency_rounds, 2 * (16u - 1));
    EXPECT_NEAR(step.round_latency_seconds, 3.25e-6, 1e-12);
    total += step.bytes;
  }
  EXPECT_NEAR(total, 8 * 16 * channel_bytes, 1e-6 * total);
  // Hierarchical adds the phases inside the machines to the rails' all-reduce: slower.
  EXPECT_GT(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHierarchical, group, bytes,
                                        cluster),
            1.3 * collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes,
                                              cluster));
}

}  // namespace
}  // namespace placesim
