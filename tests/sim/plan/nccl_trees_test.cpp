// NCCL's all-reduce trees (sim/plan/nccl_trees.h): a chain through each machine's GPUs, two
// binary trees over the machines, NCCL's chunk sizes. Every tree, chunk and time below is derived
// by hand from the cluster templates and hardware_profiles/links.json.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "sim/plan/collective_schedule.h"
#include "sim/plan/nccl_trees.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::first_gpus;

Cluster one_gpu_machines(size_t machines) { return testing::one_gpu_machines(machines, 1e10, 5e-6); }

std::map<DeviceId, DeviceId> parents(const ReductionTree& tree) {
  std::map<DeviceId, DeviceId> parent;
  for (const TreeEdge& edge : tree.edges) parent[edge.child] = edge.parent;
  return parent;
}

// GPUs 0-4 of a DGX-1 V100 (hardware_profiles/clusters/dgx1_v100.json): GPU 4's only NVLink
// among them goes to GPU 0 (two bricks), so no ring closes over NVLink, but the chain 1-2-3-0-4
// runs over doubled pairs only (1-2, 2-3, 3-0, 0-4: 45.1 GB/s each way). The search starts at
// GPU 0, which ends no such chain, then GPU 1. Both trees are that chain (one machine), each
// reducing 512 MiB of a 1 GiB all-reduce up it and then broadcasting it down; each way of each
// pair carries both trees' halves at once: 22.55 GB/s each. NCCL's chunk: 512 MiB / 512 KiB =
// 1024 chunks >= 8 x depth 4, so 512 KiB. Each phase: 4 x (1 us + 524,288 / 22.55e9) + 1 us +
// (536,870,912 - 524,288) / 22.55e9 = 23.8 ms; the all-reduce 2 x that, 47.7 ms: a bus
// bandwidth of 1.6 x 1 GiB / 47.7 ms = 36.0 GB/s, where NCCL measured 37.2 (vTrain's table,
// hardware_profiles/collectives/vtrain_v100-sxm2-nvlink-8gpu.csv) and the best ring 12.0.
TEST(NcclTrees, FiveGpusOfADgx1V100ChainOverDoubledNvlinksWhereNoRingCloses) {
  const Cluster cluster = testing::template_cluster("dgx1_v100");
  const std::vector<DeviceId> gpu = first_gpus(cluster, 8);
  const std::vector<DeviceId> group(gpu.begin(), gpu.begin() + 5);
  EXPECT_EQ(node_chain(group, cluster), (std::vector<DeviceId>{gpu[1], gpu[2], gpu[3], gpu[0], gpu[4]}));
  EXPECT_DOUBLE_EQ(cluster.route_bandwidth_bytes_per_second(gpu[0], gpu[4]), 2 * 2.255e10);
  const auto trees = nccl_trees(group, cluster);
  for (const ReductionTree& tree : trees) {
    EXPECT_EQ(tree.root, gpu[1]);
    EXPECT_EQ(tree.depth, 4u);
    EXPECT_EQ(parents(tree), (std::map<DeviceId, DeviceId>{
                                 {gpu[2], gpu[1]}, {gpu[3], gpu[2]}, {gpu[0], gpu[3]}, {gpu[4], gpu[0]}}));
  }
  const double bytes = 1024.0 * 1024 * 1024, half = bytes / 2, chunk = 524288, rate = 2.255e10;
  const double phase = 4 * (1e-6 + chunk / rate) + 1e-6 + (half - chunk) / rate;
  EXPECT_NEAR(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree, group,
                                          bytes, cluster),
              2 * phase, 1e-9);
  EXPECT_GT(collective_estimate_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes, cluster),
            2.5 * 2 * phase);
}

// Four machines: tree 0 has position 0 at its root with one child, 2 (the largest power of two
// below 4), whose children are 1 and 3; tree 1 puts machine i at position 3 - i: machine 3 at
// the root, machine 1 under it, machines 2 and 0 under machine 1. Machines 0 and 2 are inner in
// tree 0 and leaves in tree 1, machines 1 and 3 the other way round.
TEST(NcclTrees, TwoBinaryTreesOverFourMachinesSwapInnerMachinesAndLeaves) {
  const Cluster cluster = one_gpu_machines(4);
  const auto trees = nccl_trees({0, 1, 2, 3}, cluster);
  EXPECT_EQ(trees[0].root, 0u);
  EXPECT_EQ(parents(trees[0]), (std::map<DeviceId, DeviceId>{{2, 0}, {1, 2}, {3, 2}}));
  EXPECT_EQ(trees[1].root, 3u);
  EXPECT_EQ(parents(trees[1]), (std::map<DeviceId, DeviceId>{{1, 3}, {2, 1}, {0, 1}}));
  EXPECT_EQ(trees[0].depth, 2u);
  EXPECT_EQ(trees[1].depth, 2u);
}

// Every machine in both trees once, each edge after the edges below it; over both trees a machine
// has at most two children (an even number of machines: each inner in one tree, a leaf in the
// other) or three (an odd number: the last machine, tree 1's root, also inner in tree 0); the
// depth is floor(log2(M - 1)) + 1 at most (the root's one child atop a balanced tree).
TEST(NcclTrees, EveryMachineHasAParentInEachTreeAndFewChildrenOverBoth) {
  for (size_t m = 2; m <= 17; ++m) {
    const Cluster cluster = one_gpu_machines(m);
    std::vector<DeviceId> group;
    for (DeviceId d = 0; d < m; ++d) group.push_back(d);
    std::map<DeviceId, size_t> children;
    for (const ReductionTree& tree : nccl_trees(group, cluster)) {
      ASSERT_EQ(tree.edges.size(), m - 1) << m;
      std::set<DeviceId> seen = {tree.root};
      std::set<DeviceId> sent;  // children whose edge up has come
      for (const TreeEdge& edge : tree.edges) {
        EXPECT_TRUE(seen.insert(edge.child).second) << m;
        for (const TreeEdge& below : tree.edges) {
          if (below.parent == edge.child) {
            EXPECT_TRUE(sent.count(below.child)) << m << ": an edge before the edges below it";
          }
        }
        sent.insert(edge.child);
        ++children[edge.parent];
      }
      EXPECT_EQ(seen.size(), m);
      size_t log = 0;
      while ((size_t{2} << log) <= m - 1) ++log;
      EXPECT_LE(tree.depth, log + 1) << m;
    }
    for (const auto& [machine, count] : children) EXPECT_LE(count, m % 2 == 0 ? 2u : 3u) << m << " machines, " << machine;
  }
}

// NCCL's tree chunk (src/enqueue.cc): 512 KiB, halved while fewer than 8 x depth chunks and over
// 128 KiB, then 4 x depth over 64 KiB, then depth over 32 KiB. Depth 4: 4 MiB -> 8, 16, 32
// chunks at 512, 256, 128 KiB: 128 KiB. 1 MiB -> 128 KiB (8 chunks, the first floor), then 64 KiB
// (16 = 4 x 4). 100 KiB -> 64 KiB (1.6 < 16, the second floor), then 32 KiB (3.1 < 4). 10 KiB:
// the bytes themselves. 512 MiB: 512 KiB, 1,024 chunks, 64 in a per-round schedule.
TEST(NcclTrees, ChunksAsNcclSizesThem) {
  const double kib = 1024;
  EXPECT_DOUBLE_EQ(tree_chunk_bytes(4096 * kib, 4), 128 * kib);
  EXPECT_DOUBLE_EQ(tree_chunk_bytes(1024 * kib, 4), 64 * kib);
  EXPECT_DOUBLE_EQ(tree_chunk_bytes(100 * kib, 4), 32 * kib);
  EXPECT_DOUBLE_EQ(tree_chunk_bytes(10 * kib, 4), 10 * kib);
  EXPECT_DOUBLE_EQ(tree_chunk_bytes(512 * 1024 * kib, 4), 512 * kib);
  EXPECT_EQ(tree_chunk_count(4096 * kib, 4), 32u);
  EXPECT_EQ(tree_chunk_count(512 * 1024 * kib, 4), kMaxTreeChunks);
  EXPECT_EQ(tree_chunk_count(10 * kib, 4), 1u);
}

// The trees' fill waits on the edges a chunk travels: two DGX H100s on NDR InfiniBand, each
// machine's chain of 8 GPUs through the NVSwitch (7 edges of 2 x 1.5 us), the two heads joined
// across the machines (GPU, PCIe 1 us, ib_ndr 1.5 us to the fabric's switch and 1.5 us from it,
// PCIe 1 us: 5 us). Each tree has one machine's head at the root, the other's below it: its
// deepest path, the child machine's last GPU up its chain and across, 7 x 3 + 5 = 26 us, depth 8.
// A 64-byte all-reduce (one chunk of 32 bytes a tree, nothing behind it) is that path up and
// down, 52 us and a few nanoseconds of bytes; every level at the slowest edge's latency, as
// until 2026-12-08, would have been 2 x 8 x 5 = 80 us.
TEST(NcclTrees, TheFillWaitsOnTheEdgesAChunkTravels) {
  const Cluster cluster = testing::scenario_from_text(R"({"model": {"zoo": "mlp"},
      "cluster": {"template": "dgx_h100", "nodes": 2, "fabric": {"link": "ib_ndr"}},
      "strategy": {"data_parallel": {"replicas": 2}}})")
                              .cluster;
  const std::vector<DeviceId> group = testing::first_gpus(cluster, 16);
  const auto trees = nccl_trees(group, cluster);
  EXPECT_EQ(std::max(trees[0].depth, trees[1].depth), 8u);
  EXPECT_NEAR(allreduce_estimate_seconds(CollectiveAlgorithm::kDoubleBinaryTree, group, 64, cluster), 52e-6, 5e-8);
}

}  // namespace
}  // namespace placesim
