// Rings through regions (sim/plan/region_ring.h) must be the nearest-neighbour walk's rings
// (sim/plan/nearest_neighbour_ring.h), member for member: on a small two-level fat tree whose
// ring is derived here by hand, and on seeded random fat trees and the DGX A100 template.
#include <gtest/gtest.h>

#include <random>

#include "sim/plan/collective_schedule.h"
#include "sim/plan/nearest_neighbour_ring.h"
#include "sim/plan/region_ring.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

/// A spine over `leaves`, each over its `nodes[leaf]` node switches, each over its GPUs (two
/// GPUs of a node may share a direct link). Returns the GPU ids by (leaf, node, index).
struct FatTree {
  Cluster cluster;
  std::vector<std::vector<std::vector<DeviceId>>> gpus;
};

DeviceId add_gpu(Cluster& cluster, int leaf, int node, int index) {
  ClusterDevice device;
  device.name = DeviceName{"worker", 0, leaf * 100 + node, DeviceKind::kGpu, index};
  device.spec = testing::round_gpu();
  device.node = leaf * 100 + node;
  return cluster.add_device(device, "task:" + std::to_string(device.node) + "/GPU:" + std::to_string(index));
}

// The hand-made tree: 3 leaves x 2 nodes x 2 GPUs joined by NVLink; leaf 2's uplink is slower.
// Routing weights (latency + 1 MiB / bandwidth): NVLink n, GPU-node switch p, node-leaf s,
// uplink u (leaf 2: u' > u).
FatTree hand_made_tree() {
  FatTree tree;
  Cluster& cluster = tree.cluster;
  const LinkSpec nvlink = testing::round_link(100e9, 1e-6), pcie = testing::round_link(20e9, 1e-6),
                 nic = testing::round_link(10e9, 2e-6), uplink = testing::round_link(40e9, 2e-6),
                 slow_uplink = testing::round_link(10e9, 2e-6);
  tree.gpus.assign(3, std::vector<std::vector<DeviceId>>(2));
  for (int leaf = 0; leaf < 3; ++leaf) {
    for (int node = 0; node < 2; ++node) {
      for (int index = 0; index < 2; ++index) tree.gpus[leaf][node].push_back(add_gpu(cluster, leaf, node, index));
    }
  }
  const VertexId spine = cluster.add_switch("spine");
  for (int leaf = 0; leaf < 3; ++leaf) {
    const VertexId leaf_switch = cluster.add_switch("leaf:" + std::to_string(leaf));
    cluster.add_link(leaf_switch, spine, leaf == 2 ? slow_uplink : uplink);
    for (int node = 0; node < 2; ++node) {
      const VertexId node_switch = cluster.add_switch("node:" + std::to_string(leaf * 100 + node));
      cluster.add_link(node_switch, leaf_switch, nic);
      const auto& gpus = tree.gpus[leaf][node];
      for (DeviceId gpu : gpus) cluster.add_link(cluster.device(gpu).vertex, node_switch, pcie);
      cluster.add_link(cluster.device(gpus[0]).vertex, cluster.device(gpus[1]).vertex, nvlink);
    }
  }
  return tree;
}

TEST(RegionRing, HandMadeFatTreeGivesTheRingDerivedByHand) {
  const FatTree tree = hand_made_tree();
  auto gpu = [&](int leaf, int node, int index) { return tree.gpus[leaf][node][index]; };
  // From a GPU, by the routing metric: the other GPU of its node n (< 2p), a GPU of another node
  // under its leaf 2p + 2s, one under another leaf 2p + 2s + 2u, under leaf 2 2p + 2s + u + u'.
  const std::vector<DeviceId> group{gpu(1, 0, 1), gpu(2, 1, 0), gpu(0, 0, 0), gpu(1, 1, 0), gpu(0, 1, 1),
                                    gpu(2, 0, 0), gpu(1, 0, 0), gpu(0, 0, 1), gpu(2, 1, 1)};
  // Member 0; its node's other GPU (6) before the lower-indexed 3 under its leaf; 3; then leaf 0
  // (2u) before leaf 2 (u + u'), so 2 though 1 is earlier; 2's node (7), its leaf (4); then
  // leaf 2, all equally far: the earliest, 1; its node (8); its leaf (5).
  const std::vector<size_t> expected_order{0, 6, 3, 2, 7, 4, 1, 8, 5};
  std::vector<DeviceId> expected;
  for (size_t index : expected_order) expected.push_back(group[index]);
  const auto fast = region_ring(group, tree.cluster);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(*fast, expected);
  EXPECT_EQ(nearest_neighbour_ring(group, tree.cluster), expected);
  EXPECT_EQ(topology_ring(group, tree.cluster), expected);
}

/// A random fat tree: 2-6 leaves with one of two uplink speeds, 1-4 nodes each of 1-4 GPUs on
/// one or two PCIe switches (both to the leaf), sometimes an NVSwitch joining all of a node's
/// GPUs. Few distinct speeds, so that distances tie often.
FatTree random_fat_tree(std::mt19937& random) {
  auto draw = [&](int low, int high) { return low + static_cast<int>(random() % static_cast<unsigned>(high - low + 1)); };
  FatTree tree;
  Cluster& cluster = tree.cluster;
  const LinkSpec speeds[] = {testing::round_link(10e9, 2e-6), testing::round_link(20e9, 1e-6),
                             testing::round_link(40e9, 2e-6), testing::round_link(100e9, 1e-6)};
  const VertexId spine = cluster.add_switch("spine");
  const int leaves = draw(2, 6);
  tree.gpus.resize(static_cast<size_t>(leaves));
  for (int leaf = 0; leaf < leaves; ++leaf) {
    const VertexId leaf_switch = cluster.add_switch("leaf:" + std::to_string(leaf));
    cluster.add_link(leaf_switch, spine, speeds[draw(1, 2)]);
    const int nodes = draw(1, 4);
    for (int node = 0; node < nodes; ++node) {
      const std::string prefix = "node:" + std::to_string(leaf * 100 + node) + "/";
      const int pcie_switches = draw(1, 2);
      std::vector<VertexId> pcie;
      for (int s = 0; s < pcie_switches; ++s) {
        pcie.push_back(cluster.add_switch(prefix + "PCIe:" + std::to_string(s)));
        cluster.add_link(pcie.back(), leaf_switch, speeds[0]);
      }
      const bool nvswitch = draw(0, 1) == 1;
      const VertexId nvs = nvswitch ? cluster.add_switch(prefix + "NVSwitch") : 0;
      std::vector<DeviceId> gpus;
      const int count = draw(1, 4);
      for (int index = 0; index < count; ++index) {
        const DeviceId gpu = add_gpu(cluster, leaf, node, index);
        cluster.add_link(cluster.device(gpu).vertex, pcie[static_cast<size_t>(index % pcie_switches)], speeds[draw(0, 1)]);
        if (nvswitch) cluster.add_link(cluster.device(gpu).vertex, nvs, speeds[3]);
        gpus.push_back(gpu);
      }
      tree.gpus[static_cast<size_t>(leaf)].push_back(gpus);
    }
  }
  return tree;
}

/// `count` distinct devices of `devices` in random order.
std::vector<DeviceId> random_group(std::vector<DeviceId> devices, size_t count, std::mt19937& random) {
  for (size_t i = devices.size(); i > 1; --i) std::swap(devices[i - 1], devices[random() % i]);
  devices.resize(count);
  return devices;
}

TEST(RegionRing, AgreesWithTheNearestNeighbourWalkOnRandomFatTrees) {
  std::mt19937 random(20261201);
  size_t compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const FatTree tree = random_fat_tree(random);
    std::vector<DeviceId> gpus;
    for (const auto& leaf : tree.gpus) {
      for (const auto& node : leaf) gpus.insert(gpus.end(), node.begin(), node.end());
    }
    if (gpus.size() < 3) continue;
    const size_t count = 3 + random() % (gpus.size() - 2);
    const std::vector<DeviceId> group = random_group(gpus, count, random);
    const auto fast = region_ring(group, tree.cluster);
    ASSERT_TRUE(fast.has_value()) << "trial " << trial;
    EXPECT_EQ(*fast, nearest_neighbour_ring(group, tree.cluster)) << "trial " << trial;
    ++compared;
  }
  EXPECT_GT(compared, 150u);
}

TEST(RegionRing, AgreesWithTheNearestNeighbourWalkOnDgxA100FatTrees) {
  // 20 DGX A100 under leaves of 3 (the last leaf of 2: a slower uplink), every GPU's data-
  // parallel group of one local index, and random groups of GPUs and CPUs across the cluster.
  const Cluster cluster = testing::scenario_from_text(R"({"model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 256, "heads": 4, "sequence": 64, "vocabulary": 1000}},
      "cluster": {"template": "dgx_a100", "nodes": 20, "fabric": {"link": "ib_hdr", "topology": "fat_tree",
                                                                  "nodes_per_leaf": 3}},
      "strategy": {"parallelism": {"data": 2}}})")
                              .cluster;
  std::vector<DeviceId> gpus, devices;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    devices.push_back(id);
    if (cluster.device(id).spec.kind == DeviceKind::kGpu) gpus.push_back(id);
  }
  for (int index = 0; index < 8; ++index) {
    std::vector<DeviceId> group;
    for (DeviceId id : gpus) {
      if (cluster.device(id).name.index == index) group.push_back(id);
    }
    std::reverse(group.begin(), group.end());
    const auto fast = region_ring(group, cluster);
    ASSERT_TRUE(fast.has_value()) << "GPU:" << index;
    EXPECT_EQ(*fast, nearest_neighbour_ring(group, cluster)) << "GPU:" << index;
  }
  std::mt19937 random(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<DeviceId> group = random_group(trial % 2 ? gpus : devices, 3 + random() % 60, random);
    const auto fast = region_ring(group, cluster);
    if (fast) {
      EXPECT_EQ(*fast, nearest_neighbour_ring(group, cluster)) << "trial " << trial;
    }
    EXPECT_EQ(topology_ring(group, cluster), nearest_neighbour_ring(group, cluster)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace placesim
