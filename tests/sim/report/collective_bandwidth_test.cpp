// algbw and busbw of simulated collectives as nccl-tests defines them (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md): algbw = S / t, busbw = algbw x factor, factor 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and reduce.
#include <gtest/gtest.h>

#include "sim/engine/engine_factory.h"
#include "sim/plan/plan_json.h"
#include "sim/report/comparison_report.h"
#include "sim/report/json_report.h"
#include "sim/report/text_report.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

constexpr double kBandwidth = 1e10;  // B, bytes/s per link direction
constexpr double kLatency = 5e-6;    // a, seconds per hop
constexpr size_t kRanks = 8;
constexpr double kBytes = 1e8;       // S, 100 MB

// kRanks GPUs in a ring, i <-> i+1 (the ring of tests/sim/plan/collective_test.cpp).
Cluster ring(double latency) {
  Cluster cluster = testing::gpus(kRanks);
  for (size_t i = 0; i < kRanks; ++i) cluster.add_link(i, (i + 1) % kRanks, testing::round_link(kBandwidth, latency));
  return cluster;
}

Task collective_task(double bytes, CollectiveKind stands_for = CollectiveKind::kAllReduce) {
  Task task;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kCollective;
  for (size_t i = 0; i < kRanks; ++i) task.group.push_back(i);
  // One ring, the cycle in rank order (NCCL 1.x's): NCCL 2.x's channels would run it both ways
  // (ring_channels_test.cpp), and the busbw below is one ring's.
  task.algorithm = CollectiveAlgorithm::kRingInRankOrder;
  task.collective = stands_for;
  task.bytes = bytes;
  return task;
}

/// The table of `plan` run by the engine of `tier`.
std::vector<CollectiveBandwidthRow> table_of(const ExecutionPlan& plan, const Cluster& cluster, Tier tier) {
  const Timeline timeline = make_engine(tier)->simulate(plan, cluster);
  return compute_metrics(plan, cluster, timeline).collective_bandwidth;
}

TEST(CollectiveBandwidth, FactorsAreNcclTests) {
  // 1 GB in 0.1 s over 4 ranks: algbw 10 GB/s; busbw x 2(4-1)/4 = 1.5, x 3/4, x 1.
  const double algbw = 1e10;
  auto busbw = [](CollectiveKind kind) { return collective_bandwidth(kind, 1e9, 4, 0.1).busbw_bytes_per_second; };
  EXPECT_DOUBLE_EQ(collective_bandwidth(CollectiveKind::kAllReduce, 1e9, 4, 0.1).algbw_bytes_per_second, algbw);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kAllReduce), algbw * 1.5);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kAllGather), algbw * 0.75);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kReduceScatter), algbw * 0.75);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kAllToAll), algbw * 0.75);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kBroadcast), algbw);
  EXPECT_DOUBLE_EQ(busbw(CollectiveKind::kReduce), algbw);
  // Nothing to divide: no time, or a single rank.
  EXPECT_EQ(collective_bandwidth(CollectiveKind::kAllReduce, 1e9, 4, 0).busbw_bytes_per_second, 0);
  EXPECT_EQ(collective_bandwidth(CollectiveKind::kAllReduce, 1e9, 1, 0.1).busbw_bytes_per_second, 0);
}

// A ring all-reduce of S = 100 MB over 8 GPUs on links of B = 10 GB/s and a = 5 us:
//   t = 2(n-1)/n x S/B + 2(n-1) x a = 1.75 x 10 ms + 14 x 5 us = 17.57 ms,
//   algbw = S / t = 5.6915 GB/s, busbw = algbw x 2(n-1)/n = 9.9602 GB/s,
// in the SimGrid engine and the analytical tier alike.
TEST(CollectiveBandwidth, RingAllReduceOfHundredMegabytesOverEightGpus) {
  const Cluster cluster = ring(kLatency);
  ExecutionPlan plan = testing::empty_plan(cluster);
  testing::add(plan, collective_task(kBytes));
  const double n = kRanks;
  const double seconds = 2 * (n - 1) / n * kBytes / kBandwidth + 2 * (n - 1) * kLatency;
  const double algbw = kBytes / seconds;
  for (Tier tier : {Tier::kSimulated, Tier::kAnalytical}) {
    const auto table = table_of(plan, cluster, tier);
    ASSERT_EQ(table.size(), 1u) << to_string(tier);
    const CollectiveBandwidthRow& row = table[0];
    EXPECT_EQ(row.kind, CollectiveKind::kAllReduce);
    EXPECT_DOUBLE_EQ(row.bytes, kBytes);
    EXPECT_EQ(row.ranks, 8);
    EXPECT_EQ(row.machines, 1);
    EXPECT_EQ(row.transport, "links");
    EXPECT_FALSE(row.measured_curve);
    EXPECT_EQ(row.calls, 1u);
    EXPECT_NEAR(row.mean_seconds, seconds, seconds * 1e-6) << to_string(tier);
    EXPECT_NEAR(row.bandwidth.algbw_bytes_per_second, algbw, algbw * 1e-6);
    EXPECT_NEAR(row.bandwidth.busbw_bytes_per_second, algbw * 2 * (n - 1) / n, algbw * 1e-6);
  }
}

// Over NCCL's transport the same ring (links without latency, of a "test" type: PCIe to NCCL)
// pays NCCL's Simple latency, 8.4 + 14 x 5.7 = 88.2 us, over 1.75 x 10 ms: the row says
// "nccl_model", protocol Simple, on both engines (sim/plan/nccl_cost_model.h).
TEST(CollectiveBandwidth, ACollectiveTimedByNcclsModelSaysSoAndItsProtocol) {
  const Cluster cluster = ring(0);
  ExecutionPlan plan = testing::empty_plan(cluster);
  plan.transports.push_back(*find_transport("nccl"));
  plan.transports.back().gpu_compute_share = 0;
  Task task = collective_task(kBytes);
  task.transport = 0;
  testing::add(plan, task);
  const double seconds = 1.75 * kBytes / kBandwidth + 88.2e-6;
  for (Tier tier : {Tier::kSimulated, Tier::kAnalytical}) {
    const auto table = table_of(plan, cluster, tier);
    ASSERT_EQ(table.size(), 1u);
    EXPECT_EQ(table[0].transport, "nccl");
    EXPECT_EQ(table[0].timing(), "nccl_model");
    EXPECT_EQ(table[0].nccl_protocol, "Simple");
    EXPECT_NEAR(table[0].mean_seconds, seconds, seconds * 1e-6) << to_string(tier);
  }
  const Json json = collective_bandwidth_json(table_of(plan, cluster, Tier::kAnalytical));
  EXPECT_EQ(json[0]["timing"], "nccl_model");
  EXPECT_EQ(json[0]["nccl_protocol"], "Simple");
}

// Without latency the ring's time is 2(n-1)/n x S/B, so busbw = S/t x 2(n-1)/n = B: the link's
// bandwidth whatever n, which is what nccl-tests' busbw is for.
TEST(CollectiveBandwidth, WithoutLatencyAllReduceBusbwIsTheLinkBandwidth) {
  const Cluster cluster = ring(0);
  ExecutionPlan plan = testing::empty_plan(cluster);
  testing::add(plan, collective_task(kBytes));
  for (Tier tier : {Tier::kSimulated, Tier::kAnalytical}) {
    const auto table = table_of(plan, cluster, tier);
    ASSERT_EQ(table.size(), 1u);
    EXPECT_NEAR(table[0].bandwidth.busbw_bytes_per_second, kBandwidth, kBandwidth * 1e-9) << to_string(tier);
    EXPECT_NEAR(table[0].bandwidth.algbw_bytes_per_second, kBandwidth / 1.75, kBandwidth * 1e-9);
  }
}

// An all-gather of S total bytes (nccl-tests' size, the task's bytes) is one ring pass of n-1
// rounds of S/n: without latency t = (n-1)/n x S/B, so algbw = S/t = B n/(n-1) and busbw =
// algbw x (n-1)/n = B again. Same for a reduce-scatter (GPUs: the adds cost no time).
TEST(CollectiveBandwidth, AllGatherAndReduceScatterTakeFactorNMinusOneOverN) {
  const Cluster cluster = ring(0);
  const double n = kRanks;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    ExecutionPlan plan = testing::empty_plan(cluster);
    testing::add(plan, collective_task(kBytes, kind));
    for (Tier tier : {Tier::kSimulated, Tier::kAnalytical}) {
      const auto table = table_of(plan, cluster, tier);
      ASSERT_EQ(table.size(), 1u);
      const CollectiveBandwidthRow& row = table[0];
      EXPECT_EQ(row.kind, kind);
      EXPECT_DOUBLE_EQ(row.bytes, kBytes);
      const double seconds = (n - 1) / n * kBytes / kBandwidth;
      EXPECT_NEAR(row.mean_seconds, seconds, seconds * 1e-9);
      EXPECT_NEAR(row.bandwidth.algbw_bytes_per_second, kBandwidth * n / (n - 1), kBandwidth * 1e-9);
      EXPECT_NEAR(row.bandwidth.busbw_bytes_per_second, kBandwidth, kBandwidth * 1e-9);
    }
  }
}

// Calls of one kind and size share a row (mean time per call); rows are by total time, largest
// first; the text shows 10 and a "+N more" line; the JSON lists every row.
TEST(CollectiveBandwidth, GroupsCallsBySizeLargestTotalTimeFirst) {
  const Cluster cluster = ring(0);
  ExecutionPlan plan = testing::empty_plan(cluster);
  // Three 10 MB all-reduces one after another (3 x 1.75 ms), one 20 MB (3.5 ms), and eleven
  // all-gathers of 1..11 MB (each (n-1)/n x S/B, at most 0.9625 ms).
  TaskId previous = testing::add(plan, collective_task(1e7));
  for (int i = 0; i < 2; ++i) previous = testing::add(plan, collective_task(1e7), {previous});
  previous = testing::add(plan, collective_task(2e7), {previous});
  for (int mb = 1; mb <= 11; ++mb) previous = testing::add(plan, collective_task(mb * 1e6, CollectiveKind::kAllGather), {previous});
  const Timeline timeline = make_engine(Tier::kSimulated)->simulate(plan, cluster);
  const RunMetrics metrics = compute_metrics(plan, cluster, timeline);
  const auto& table = metrics.collective_bandwidth;
  ASSERT_EQ(table.size(), 13u);
  EXPECT_DOUBLE_EQ(table[0].bytes, 1e7);
  EXPECT_EQ(table[0].calls, 3u);
  EXPECT_NEAR(table[0].total_seconds, 3 * 1.75e-3, 1e-9);
  EXPECT_NEAR(table[0].mean_seconds, 1.75e-3, 1e-9);
  EXPECT_DOUBLE_EQ(table[1].bytes, 2e7);
  EXPECT_EQ(table[2].kind, CollectiveKind::kAllGather);
  EXPECT_DOUBLE_EQ(table[2].bytes, 11e6);
  EXPECT_DOUBLE_EQ(table[12].bytes, 1e6);

  const std::string text = text_report(plan, cluster, metrics);
  EXPECT_NE(text.find("all_reduce"), std::string::npos);
  EXPECT_NE(text.find("    10000000  "), std::string::npos) << text;
  // Rows 10 to 12: the 3, 2 and 1 MB all-gathers, (n-1)/n x 6 MB / B = 0.525 ms together.
  EXPECT_NE(text.find("+3 more (3 calls, 525.000 us in all)"), std::string::npos) << text;

  const Json report = json_report("test", plan, cluster, timeline, metrics);
  ASSERT_EQ(report["collective_bandwidth"].size(), 13u);
  const Json& first = report["collective_bandwidth"][0];
  EXPECT_EQ(first["collective"], "all_reduce");
  EXPECT_EQ(first["ranks"], 8);
  EXPECT_EQ(first["machines"], 1);
  EXPECT_EQ(first["calls"], 3);
  EXPECT_EQ(first["transport"], "links");
  EXPECT_EQ(first["timing"], "link_rate");
  EXPECT_NEAR(first["busbw_bytes_per_second"].get<double>(), kBandwidth, 1);
  EXPECT_EQ(report["tasks"][4]["collective"], "all_gather");
}

// A comparison of strategies gives each one's table.
TEST(CollectiveBandwidth, ComparisonReportsCarryEachStrategysTable) {
  const Cluster cluster = ring(0);
  ExecutionPlan plan = testing::empty_plan(cluster);
  testing::add(plan, collective_task(kBytes));
  StrategyResult result;
  result.name = "ring";
  result.run = compute_metrics(plan, cluster, make_engine(Tier::kAnalytical)->simulate(plan, cluster));
  const Json report = comparison_json("test", {result, StrategyResult{}});
  ASSERT_EQ(report["strategies"][0]["collective_bandwidth"].size(), 1u);
  EXPECT_NEAR(report["strategies"][0]["collective_bandwidth"][0]["busbw_bytes_per_second"].get<double>(), kBandwidth, 1);
  EXPECT_TRUE(report["strategies"][1]["collective_bandwidth"].empty());
}

// Plan files keep what a collective stands for, so `simulate plan.json` reports it as `run` did.
TEST(CollectiveBandwidth, PlanFilesKeepTheCollectiveKind) {
  const Cluster cluster = ring(kLatency);
  ExecutionPlan plan = testing::empty_plan(cluster);
  testing::add(plan, collective_task(kBytes));
  testing::add(plan, collective_task(kBytes, CollectiveKind::kReduceScatter));
  const Json written = write_plan_json(plan, cluster);
  EXPECT_FALSE(written["tasks"][0].contains("collective"));  // all-reduce, the default
  EXPECT_EQ(written["tasks"][1]["collective"], "reduce_scatter");
  const PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  EXPECT_EQ(read.plan.tasks[0].collective, CollectiveKind::kAllReduce);
  EXPECT_EQ(read.plan.tasks[1].collective, CollectiveKind::kReduceScatter);
}

}  // namespace
}  // namespace placesim
