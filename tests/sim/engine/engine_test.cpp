// The SimGrid engine against hand-derived times: roofline ops, chains, parallel devices,
// transfers with latency, bandwidth sharing and multi-hop routes.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/synthetic_plan.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/simgrid_engine.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::add;
using testing::compute_task;
using testing::empty_plan;
using testing::gpus;
using testing::round_gpu;
using testing::round_link;
using testing::transfer_task;

// SimGrid's clock is exact to about a nanosecond; relative tolerance for derived values.
constexpr double kRelative = 1e-6;

Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) {
  return make_simgrid_engine()->simulate(plan, cluster);
}

TEST(Engine, OneComputeBoundOpTakesItsRooflineTime) {
  DeviceSpec spec = round_gpu(/*peak=*/1e12, /*bandwidth=*/1e11, /*launch=*/5e-6);
  spec.compute_efficiency[OpKind::kMatMul] = 0.5;
  Cluster cluster = gpus(1, spec);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, /*flops=*/2e12, /*bytes=*/1e9));
  // max(2e12 / (1e12 x 0.5), 1e9 / 1e11) + 5e-6 = 4 s + 5 us
  const double expected = std::max(2e12 / (1e12 * 0.5), 1e9 / 1e11) + 5e-6;
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
}

TEST(Engine, OneMemoryBoundOpTakesBytesOverEffectiveBandwidth) {
  DeviceSpec spec = round_gpu(1e12, 1e11);
  spec.memory_efficiency = 0.8;
  Cluster cluster = gpus(1, spec);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, /*flops=*/1e6, /*bytes=*/4e9, OpKind::kElementwise));
  const double expected = 4e9 / (1e11 * 0.8);  // 50 ms; math is 1 us
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
}

TEST(Engine, PrecisionSelectsThePeak) {
  DeviceSpec spec = round_gpu(1e12);
  spec.peak_flops_per_second[Precision::kFp16] = 8e12;
  Cluster cluster = gpus(1, spec);
  ExecutionPlan plan = empty_plan(cluster);
  plan.precision = Precision::kFp16;
  add(plan, compute_task(0, 8e12));
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 1.0, kRelative);
}

TEST(Engine, ChainTakesTheSumOfItsOps) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId b = add(plan, compute_task(0, 2e12), {a});
  add(plan, compute_task(0, 3e12), {b});
  Timeline timeline = simulate(plan, cluster);
  EXPECT_NEAR(timeline.makespan_seconds(), 1.0 + 2.0 + 3.0, 6 * kRelative);
  EXPECT_NEAR(timeline.tasks[1].start_seconds, 1.0, kRelative);
  EXPECT_NEAR(timeline.tasks[2].start_seconds, 3.0, kRelative);
}

TEST(Engine, IndependentOpsOnTwoDevicesTakeTheLonger) {
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 3e12));
  add(plan, compute_task(1, 2e12));
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), std::max(3.0, 2.0), kRelative);
}

TEST(Engine, DevicesSharingOneGpusComputeSplitItsSpeed) {
  // GPU:1 is a second stream on GPU:0's hardware: two 2 s tasks that overlap fully each get half
  // the speed, so both end at 4 s; a 1 s task alone after that runs at full speed.
  Cluster cluster = gpus(1);
  ClusterDevice second;
  second.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, 1};
  second.spec = round_gpu();
  second.shares_compute_with = 0;
  cluster.add_device(second, "GPU:1");
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 2e12));
  add(plan, compute_task(1, 2e12));
  add(plan, compute_task(0, 1e12), {a});
  Timeline timeline = simulate(plan, cluster);
  EXPECT_NEAR(timeline.tasks[0].end_seconds, 4.0, kRelative);
  EXPECT_NEAR(timeline.tasks[1].end_seconds, 4.0, kRelative);
  EXPECT_NEAR(timeline.makespan_seconds(), 5.0, kRelative);
}

TEST(Engine, GemmEfficiencyCurveIsInterpolatedInLogFlops) {
  // Curve (2e9 FLOPs, 0.5), (2e11, 0.9): a 2e10-FLOP matmul sits half way in log(FLOPs), so its
  // efficiency is 0.7 and it takes 2e10 / (1e12 x 0.7) s; beyond the ends the end values hold;
  // an elementwise op keeps its kind's efficiency.
  DeviceSpec spec = round_gpu(1e12, 1e15);
  spec.gemm_efficiency_by_flops = {{2e9, 0.5}, {2e11, 0.9}};
  EXPECT_NEAR(spec.efficiency_for(OpKind::kMatMul, 2e10), 0.7, 1e-12);
  EXPECT_NEAR(spec.efficiency_for(OpKind::kConv, 1e8), 0.5, 1e-12);
  EXPECT_NEAR(spec.efficiency_for(OpKind::kMatMul, 1e13), 0.9, 1e-12);
  EXPECT_EQ(spec.efficiency_for(OpKind::kElementwise, 2e10), spec.efficiency_for(OpKind::kElementwise));
  Cluster cluster = gpus(1, spec);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 2e10));
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 2e10 / (1e12 * 0.7), 1e-9);
}

TEST(Engine, ANicListedTwiceIsOneFabricLinkOfTwiceTheBandwidth) {
  // dgx_a100 lists each of its 4 PCIe switches twice under "nics" (8 HDR HCAs). Two nodes: one
  // fabric link per switch and node at 2 x 25 GB/s, and a transfer between the nodes simulates
  // (two links of one name used to abort SimGrid).
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  Json description = Json::parse(R"({"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}})");
  Cluster cluster = build_cluster(JsonReader(description, "test.json"), catalog, ".");
  const double hdr = catalog.link("ib_hdr", JsonReader(description, "test.json")).bandwidth_bytes_per_second;
  int fabric_links = 0;
  for (const ClusterLink& link : cluster.links()) {
    if (link.name.find("fabric/switch") == std::string::npos) continue;
    ++fabric_links;
    EXPECT_DOUBLE_EQ(link.spec.bandwidth_bytes_per_second, 2 * hdr) << link.name;
  }
  EXPECT_EQ(fabric_links, 2 * 4);
  ExecutionPlan plan = empty_plan(cluster);
  DeviceId from = cluster.match(*DeviceName::parse("/job:worker/task:0/device:GPU:0", nullptr)).front();
  DeviceId to = cluster.match(*DeviceName::parse("/job:worker/task:1/device:GPU:0", nullptr)).front();
  add(plan, transfer_task(from, to, 1e9));
  EXPECT_GT(simulate(plan, cluster).makespan_seconds(), 0.0);
}

TEST(Engine, IndependentOpsOnOneDeviceRunOneAtATimeInPlanOrder) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 3e12));
  add(plan, compute_task(0, 2e12));
  Timeline timeline = simulate(plan, cluster);
  EXPECT_NEAR(timeline.makespan_seconds(), 3.0 + 2.0, kRelative);
  EXPECT_NEAR(timeline.tasks[0].end_seconds, 3.0, kRelative);  // lower id first
  EXPECT_NEAR(timeline.tasks[1].start_seconds, 3.0, kRelative);
}

TEST(Engine, SlowDeviceSpeedFactorStretchesItsOps) {
  Cluster cluster = gpus(1);
  cluster.devices()[0].speed_factor = 0.5;
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 1e12));
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 2.0, kRelative);
}

TEST(Engine, TransferTakesLatencyPlusBytesOverBandwidth) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(/*bandwidth=*/1e9, /*latency=*/1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 5e8));
  const double expected = 1e-5 + 5e8 / 1e9;
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
}

TEST(Engine, TwoConcurrentTransfersOnOneLinkShareItFairly) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 5e8));
  add(plan, transfer_task(0, 1, 5e8));
  Timeline timeline = simulate(plan, cluster);
  // Each gets half the bandwidth: latency + S / (B / 2).
  const double expected = 1e-5 + 5e8 / (1e9 / 2);
  EXPECT_NEAR(timeline.tasks[0].end_seconds, expected, expected * kRelative);
  EXPECT_NEAR(timeline.tasks[1].end_seconds, expected, expected * kRelative);
}

TEST(Engine, OppositeDirectionsDoNotShareAFullDuplexLink) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 5e8));
  add(plan, transfer_task(1, 0, 5e8));
  const double expected = 1e-5 + 5e8 / 1e9;
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
}

TEST(Engine, RouteThroughASwitchPaysBothLatenciesAndTheSlowerBandwidth) {
  Cluster cluster = gpus(2);
  VertexId hub = cluster.add_switch("switch");
  cluster.add_link(cluster.device(0).vertex, hub, round_link(2e9, 1e-5));
  cluster.add_link(hub, cluster.device(1).vertex, round_link(1e9, 3e-5));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 1e9));
  const double expected = (1e-5 + 3e-5) + 1e9 / std::min(2e9, 1e9);
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
  EXPECT_NEAR(uncontended_transfer_seconds(1e9, 0, 1, cluster), expected, expected * kRelative);
}

TEST(Engine, TransferOverlapsWithComputeOnBothEnds) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 0));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 2e9));  // 2 s
  add(plan, compute_task(0, 1e12));     // 1 s on the source
  add(plan, compute_task(1, 1.5e12));   // 1.5 s on the destination
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 2.0, kRelative);
}

TEST(Engine, ComputeWaitsForItsTransfer) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId produce = add(plan, compute_task(0, 1e12));
  TaskId move = add(plan, transfer_task(0, 1, 1e9), {produce});
  add(plan, compute_task(1, 2e12), {move});
  const double expected = 1.0 + (1e-5 + 1.0) + 2.0;
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative);
}

TEST(Engine, ZeroCostTasksTakeNoTime) {
  Cluster cluster = gpus(1, round_gpu(1e12, 1e11, /*launch=*/1e-3));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId nothing = add(plan, compute_task(0, 0, 0));  // a variable: no kernel, no launch
  add(plan, compute_task(0, 1e12), {nothing});
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 1.0 + 1e-3, kRelative);
}

TEST(Engine, SecondSimulationInOneProcessGivesTheSameTimeline) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  add(plan, transfer_task(0, 1, 3e8), {a});
  Timeline first = simulate(plan, cluster);   // in this process
  Timeline second = simulate(plan, cluster);  // SimGrid allows one engine per process: a forked child
  ASSERT_EQ(first.tasks.size(), second.tasks.size());
  for (size_t i = 0; i < first.tasks.size(); ++i) {
    EXPECT_EQ(first.tasks[i].start_seconds, second.tasks[i].start_seconds);
    EXPECT_EQ(first.tasks[i].end_seconds, second.tasks[i].end_seconds);
  }
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

// The engine's contract on a plan with many simultaneous completions (16 devices in a ring with
// equal op sizes: this once crashed SimGrid when an activity was freed inside its completion
// callback): every task starts after its deps end, and no device runs two computes at once.
TEST(EngineContract, DependenciesAndOneComputePerDeviceHoldOnARingPlan) {
  Cluster cluster = bench::ring_cluster(16);
  ExecutionPlan plan = bench::synthetic_plan(cluster, 4000, 10);
  Timeline timeline = make_simgrid_engine()->simulate(plan, cluster);
  ASSERT_EQ(timeline.tasks.size(), plan.tasks.size());
  std::vector<std::vector<TaskInterval>> per_device(cluster.devices().size());
  for (const Task& task : plan.tasks) {
    const TaskInterval& interval = timeline.tasks[task.id];
    EXPECT_LE(interval.start_seconds, interval.end_seconds);
    for (TaskId dep : task.deps) EXPECT_GE(interval.start_seconds, timeline.tasks[dep].end_seconds - 1e-12);
    if (task.kind == TaskKind::kCompute) per_device[task.device].push_back(interval);
  }
  for (auto& intervals : per_device) {
    std::sort(intervals.begin(), intervals.end(),
              [](const TaskInterval& a, const TaskInterval& b) { return a.start_seconds < b.start_seconds; });
    for (size_t i = 1; i < intervals.size(); ++i) {
      EXPECT_GE(intervals[i].start_seconds, intervals[i - 1].end_seconds - 1e-12);
    }
  }
}

}  // namespace
}  // namespace placesim
