// NCCL's own latency and protocol model (sim/plan/nccl_cost_model.h), each number worked out by
// hand from NCCL 2.20.3's tuning constants, and what it does to a collective on both engines.
#include "sim/plan/nccl_cost_model.h"

#include <gtest/gtest.h>

#include "sim/analytical/analytical_engine.h"
#include "sim/cluster/transport.h"
#include "sim/engine/simgrid_engine.h"
#include "sim/plan/collective_schedule.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

constexpr double kUs = 1e-6;

NcclGroupShape shape(int64_t ranks, int64_t nodes, bool nvlink, int compute_capability) {
  NcclGroupShape s;
  s.ranks = ranks;
  s.nodes = nodes;
  s.nvlink_inside = nvlink;
  s.compute_capability = compute_capability;
  return s;
}

// Four A100-class GPUs in one machine, every pair on its own NVLink of 100 GB/s and `latency`.
Cluster four_nvlink_a100s(double latency) {
  DeviceSpec a100 = testing::round_gpu();
  a100.compute_capability = "8.0";
  Cluster cluster = testing::gpus(4, a100);
  for (DeviceId i = 0; i < 4; ++i) {
    for (DeviceId j = i + 1; j < 4; ++j) {
      cluster.add_link(cluster.device(i).vertex, cluster.device(j).vertex, testing::round_link(1e11, latency, "nvlink3"));
    }
  }
  return cluster;
}

// A plan of one ring all-reduce of `bytes` over the cluster's four GPUs, over the "nccl" transport
// (without its share of the SMs: nothing computes) or over the links alone.
ExecutionPlan one_allreduce(const Cluster& cluster, double bytes, bool over_nccl) {
  ExecutionPlan plan = testing::empty_plan(cluster);
  plan.collective_fidelity = CollectiveFidelity::kPerPhase;
  Task allreduce;
  allreduce.kind = TaskKind::kCollective;
  allreduce.phase = Phase::kCollective;
  allreduce.algorithm = CollectiveAlgorithm::kRing;
  allreduce.group = {0, 1, 2, 3};
  allreduce.bytes = bytes;
  if (over_nccl) {
    plan.transports.push_back(*find_transport("nccl"));
    plan.transports.back().gpu_compute_share = 0;
    allreduce.transport = 0;
  }
  testing::add(plan, allreduce);
  return plan;
}

// 16 A100s on two machines of 8 (NVLink inside), a ring all-reduce: 2 x 15 = 30 steps, 2 x 2 = 4
// of them over the network. Simple: 8.4 + 26 x max(3.4, 3 x 1.0) + 4 x 14 = 152.8 us, x1.4 (the
// plateau of a Simple ring across machines, compute capability 8.0) = 213.92 us. LL: 6.6 + 26 x
// max(0.6, 1.0) + 4 x 2.7 = 43.4 us. LL128: 14 + 26 x 1.9 + 4 x 4.0 = 79.4 us.
TEST(NcclCostModel, RingLatencyAcrossMachinesCountsNetworkStepsAndThePlateau) {
  const NcclGroupShape two_dgx = shape(16, 2, true, 80);
  const double bytes = 1 << 20;
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kSimple,
                                   two_dgx, bytes),
              213.92 * kUs, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kLowLatency,
                                   two_dgx, bytes),
              43.4 * kUs, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing,
                                   NcclProtocol::kLowLatency128, two_dgx, bytes),
              79.4 * kUs, 1e-9);
  // Before Ampere the plateau is x1.9: the same layout on V100s, 152.8 x 1.9 = 290.32 us.
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kSimple,
                                   shape(16, 2, true, 70), bytes),
              290.32 * kUs, 1e-9);
  // NCCL's hierarchical rings are its ring across machines: the same latency.
  EXPECT_DOUBLE_EQ(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHierarchical,
                                        NcclProtocol::kSimple, two_dgx, bytes),
                   nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kSimple,
                                        two_dgx, bytes));
}

// The same two machines with AMD hosts (a DGX A100's EPYCs): NCCL's network post overhead is 2 us,
// so a step inside a machine costs at least 6 us under Simple: 8.4 + 26 x 6 + 4 x 14 = 220.4 us,
// x1.4 = 308.56 us; LL 6.6 + 26 x 2 + 4 x 2.7 = 69.4 us; LL's cap across two machines 22.5 GB/s
// (Intel's 39.0): at 100 GB/s of Simple bus bandwidth 100 / 22.5 = 4.444x. The shape finds the
// vendor in the first GPU's machine's CPU:0.
TEST(NcclCostModel, AmdHostsPayTheirOwnNetworkOverheadAndLowLatencyCap) {
  NcclGroupShape amd = shape(16, 2, true, 80);
  amd.amd_hosts = true;
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kSimple, amd,
                                   1 << 20),
              308.56 * kUs, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kLowLatency,
                                   amd, 1 << 20),
              69.4 * kUs, 1e-9);
  EXPECT_NEAR(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kLowLatency,
                                      amd, 1e6, 100e9),
              100.0 / 22.5, 1e-12);

  for (const std::string cpu_name : {"AMD EPYC 7742 64-Core Processor", "Intel(R) Xeon(R) Platinum 8480C"}) {
    Cluster cluster = testing::gpus(2);
    ClusterDevice cpu;
    cpu.name = DeviceName{"localhost", 0, 0, DeviceKind::kCpu, 0};
    cpu.spec.kind = DeviceKind::kCpu;
    cpu.spec.name = cpu_name;
    cluster.add_device(cpu, "CPU:0");
    const std::optional<NcclGroupShape> found = nccl_group_shape({0, 1}, cluster);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->amd_hosts, cpu_name.rfind("AMD", 0) == 0) << cpu_name;
    EXPECT_FALSE(found->nvlink_inside);  // no link between the two: not over NVLink
  }
}

// 8 PCIe P100s in one machine, an all-gather: 7 steps, none across machines, no plateau:
// Simple 8.4 + 7 x 5.7 = 48.3 us. A tree all-reduce of 32 ranks on 4 NVLink machines: Simple as
// NCCL's tuner believes it 2 x ((8 - 1) x 28 + log2(4) x 28) = 504 us, as taken 2 x (7 + 2) x
// 6.2 = 111.6 us (the 28 us less a 256 KiB chunk at 12 GB/s, 21.8 us, which placesim's tree moves
// on the links); LL 6.8 + 2 x (7 x 0.6 + 2 x 5.0) = 35.2 us either way.
TEST(NcclCostModel, OneMachineRingsAndTreesTakeTheirOwnSteps) {
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, NcclProtocol::kSimple,
                                   shape(8, 1, false, 60), 1e6),
              48.3 * kUs, 1e-9);
  const NcclGroupShape four_machines = shape(32, 4, true, 80);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                   NcclProtocol::kSimple, four_machines, 1e6, NcclTimes::kTunerBelieves),
              504 * kUs, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                   NcclProtocol::kSimple, four_machines, 1e6),
              111.6 * kUs, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                   NcclProtocol::kLowLatency, four_machines, 1e6),
              35.2 * kUs, 1e-9);
}

// Bandwidth against Simple's: a ring LL all-reduce across 3+ machines moves a quarter, and no more
// than LL's 20.4 GB/s cap (at 100 GB/s of Simple bus bandwidth: 100 / 20.4 = 4.902x); an LL
// all-gather in one machine a third; LL128 0.92 (0.7 with one GPU per machine). A tree's Simple
// at 1 MiB as NCCL's tuner believes it: 1 / 0.92 / 0.5 (its tree correction at log2(1 MiB / 64)
// = 14) = 2.1739; as taken (a measured tree, docs/communication.md): 1; LL 3.8, LL128 128/120 in
// and across machines.
TEST(NcclCostModel, ProtocolsMoveTheirShareOfTheBandwidth) {
  const NcclGroupShape three_machines = shape(24, 3, true, 80);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing,
                                           NcclProtocol::kLowLatency, three_machines, 1e6, 10e9),
                   4.0);
  EXPECT_NEAR(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, NcclProtocol::kLowLatency,
                                      three_machines, 1e6, 100e9),
              100.0 / 20.4, 1e-12);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing,
                                           NcclProtocol::kLowLatency, shape(8, 1, true, 80), 1e6, 10e9),
                   3.0);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing,
                                           NcclProtocol::kLowLatency128, three_machines, 1e6, 10e9),
                   1 / 0.92);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing,
                                           NcclProtocol::kLowLatency128, shape(4, 4, true, 80), 1e6, 10e9),
                   1 / 0.7);
  EXPECT_NEAR(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                      NcclProtocol::kSimple, three_machines, 1 << 20, 10e9, NcclTimes::kTunerBelieves),
              1 / 0.92 / 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                           NcclProtocol::kSimple, three_machines, 1 << 20, 10e9),
                   1.0);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                           NcclProtocol::kLowLatency, three_machines, 1 << 20, 10e9),
                   3.8);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                           NcclProtocol::kLowLatency128, shape(8, 1, true, 80), 1 << 20, 10e9),
                   128.0 / 120.0);
  EXPECT_DOUBLE_EQ(nccl_bandwidth_slowdown(CollectiveKind::kAllReduce, CollectiveAlgorithm::kDoubleBinaryTree,
                                           NcclProtocol::kLowLatency128, three_machines, 1 << 20, 10e9),
                   128.0 / 120.0);
  EXPECT_TRUE(nccl_protocol_enabled(NcclProtocol::kLowLatency128, shape(8, 1, true, 80)));
  EXPECT_FALSE(nccl_protocol_enabled(NcclProtocol::kLowLatency128, shape(8, 1, false, 80)));  // PCIe
  EXPECT_FALSE(nccl_protocol_enabled(NcclProtocol::kLowLatency128, shape(8, 1, true, 60)));   // P100
}

// Four A100-class GPUs in one machine, every pair on its own NVLink (100 GB/s, 1 us). NCCL's
// channels run the cycle 0-1-2-3 both ways (the two links left make no cycle): 2 x 100 GB/s. A
// ring all-reduce of S: placesim's links give 2 x 3 x 1 us + 1.5 S / 2e11. At S = 64 MiB the
// bytes take 503.32 us: Simple 8.4 + 6 x 3.4 = 28.8 us of NCCL latency in place of the links'
// 6 us, 532.12 us in all (LL128 25.4 + 503.32 / 0.92 = 572.5 us; LL four times the bytes). At
// 4 KiB (0.031 us of bytes) LL wins: 6.6 + 6 x 0.6 + 4 x 0.031 = 10.323 us.
TEST(NcclCostModel, TakesTheFastestProtocolOnTheLinksBandwidth) {
  const Cluster cluster = four_nvlink_a100s(1e-6);
  const std::vector<DeviceId> group = {0, 1, 2, 3};
  const std::optional<NcclGroupShape> found = nccl_group_shape(group, cluster);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->ranks, 4);
  EXPECT_EQ(found->nodes, 1);
  EXPECT_TRUE(found->nvlink_inside);
  EXPECT_EQ(found->compute_capability, 80);

  const double large = 64.0 * (1 << 20);
  const std::optional<NcclCollectiveTime> big =
      nccl_collective_time(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, large, cluster);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->protocol, NcclProtocol::kSimple);
  EXPECT_NEAR(big->link_latency_seconds, 6 * kUs, 1e-12);
  EXPECT_NEAR(big->latency_seconds, 28.8 * kUs, 1e-12);
  EXPECT_NEAR(big->seconds, 28.8 * kUs + 1.5 * large / 2e11, 1e-10);

  const std::optional<NcclCollectiveTime> small =
      nccl_collective_time(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, 4096, cluster);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->protocol, NcclProtocol::kLowLatency);
  EXPECT_NEAR(small->seconds, 10.2 * kUs + 4 * 1.5 * 4096 / 2e11, 1e-12);

  EXPECT_NEAR(big->links_seconds, 6 * kUs + 1.5 * large / 2e11, 1e-10);

  // Not NCCL's: halving-doubling, an all-to-all, a group with a CPU.
  EXPECT_FALSE(nccl_collective_time(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHalvingDoubling, group, large,
                                    cluster));
  EXPECT_FALSE(nccl_collective_time(CollectiveKind::kAllToAll, CollectiveAlgorithm::kPairwise, group, large, cluster));

  // Both engines time the all-reduce so over the "nccl" transport, and as the links alone without one.
  for (bool over_nccl : {true, false}) {
    SCOPED_TRACE(over_nccl);
    const ExecutionPlan plan = one_allreduce(cluster, large, over_nccl);
    const double expected = (over_nccl ? 28.8 * kUs : 6 * kUs) + 1.5 * large / 2e11;
    EXPECT_NEAR(estimate_step(plan, cluster).makespan_seconds, expected, expected * 1e-9);
    EXPECT_NEAR(make_simgrid_engine()->simulate(plan, cluster).makespan_seconds(), expected, expected * 1e-6);
  }
}

// The links' alpha-beta time is a floor: on links of 20 us a ring of four charges 6 x 20 = 120 us
// of latency, more than NCCL's 28.8 us, so the 64 MiB all-reduce takes the links' 120 us +
// 503.32 us (two channels) = 623.32 us on both engines (the SimGrid engine's transfers owe NCCL
// nothing more).
TEST(NcclCostModel, TheLinksAlphaBetaTimeIsAFloor) {
  const Cluster cluster = four_nvlink_a100s(20e-6);
  const std::vector<DeviceId> group = {0, 1, 2, 3};
  const double bytes = 64.0 * (1 << 20);
  const double expected = 120 * kUs + 1.5 * bytes / 2e11;
  const std::optional<NcclCollectiveTime> time =
      nccl_collective_time(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, group, bytes, cluster);
  ASSERT_TRUE(time);
  EXPECT_NEAR(time->latency_seconds, 28.8 * kUs, 1e-12);
  EXPECT_NEAR(time->seconds, expected, 1e-10);
  const ExecutionPlan plan = one_allreduce(cluster, bytes, true);
  EXPECT_NEAR(estimate_step(plan, cluster).makespan_seconds, expected, expected * 1e-9);
  EXPECT_NEAR(make_simgrid_engine()->simulate(plan, cluster).makespan_seconds(), expected, expected * 1e-6);
}

}  // namespace
}  // namespace placesim
