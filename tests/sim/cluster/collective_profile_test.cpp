// Measured collective curves (sim/cluster/collective_profile.h): the lookup between measured
// sizes, nccl-tests' time definition, when a curve applies, the engines using it, the bundled
// DGX-1 V100 curve, and `calibrate --from-nccl-tests`'s log reader.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <filesystem>
#include <fstream>
#include <optional>

#include "sim/analytical/analytical_engine.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/cluster/cluster_json.h"
#include "sim/cluster/collective_profile.h"
#include "sim/cluster/nccl_tests_log.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/engine/simgrid_engine.h"
#include "sim/plan/collective_schedule.h"
#include "sim/report/json_report.h"
#include "sim/report/metrics.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace collective_profile_test {  // a unity batch holds several test files
namespace {

namespace fs = std::filesystem;

constexpr double kMiB = 1048576;

fs::path write_temp(const std::string& name, const std::string& text) {
  fs::path path = fs::temp_directory_path() / ("placesim_collective_profile_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path;
}

// A 4-GPU all-reduce curve of two points: 1 MiB at busbw 10 GB/s, 4 MiB at 30 GB/s.
// seconds = bytes x 2(n-1)/n / busbw, 2(4-1)/4 = 1.5: 1 MiB -> 1.572864e-4 s, 4 MiB -> 2.097152e-4 s.
const char* const kTwoPoints =
    "system,collective,gpus,bytes,algbw_bytes_per_second,busbw_bytes_per_second,seconds,source\n"
    "test-4gpu,all_reduce,4,1048576,6.66667e+09,1e+10,1.572864e-4,hand-made row 1\n"
    "test-4gpu,all_reduce,4,4194304,2e+10,3e+10,2.097152e-4,hand-made row 2, with a comma\n";

std::shared_ptr<const CollectiveProfile> two_points() {
  return std::make_shared<const CollectiveProfile>(read_collective_profile(write_temp("two.csv", kTwoPoints)));
}

TEST(CollectiveCurve, InterpolatesBusBandwidthLinearlyInLogBytesAndTimesLikeNcclTests) {
  auto profile = two_points();
  const CollectiveCurve* curve = profile->find(CollectiveKind::kAllReduce, 4);
  ASSERT_NE(curve, nullptr);
  EXPECT_EQ(profile->find(CollectiveKind::kAllReduce, 8), nullptr);
  EXPECT_EQ(curve->points.back().source, "hand-made row 2, with a comma");
  // 2 MiB is halfway from 1 to 4 MiB in log(bytes): ln(2)/ln(4) = 0.5, busbw = 10 + 0.5 x 20 = 20 GB/s;
  // time = 2 MiB x 1.5 / 20 GB/s.
  EXPECT_NEAR(curve->busbw_bytes_per_second(2 * kMiB), 2e10, 1e3);
  EXPECT_NEAR(curve->seconds(2 * kMiB), 2 * kMiB * 1.5 / 2e10, 1e-12);
  // 3 MiB: ln(3)/ln(4) = 0.79248, busbw = 10 + 0.79248 x 20 = 25.8496 GB/s.
  const double busbw_3mib = 1e10 + std::log(3.0) / std::log(4.0) * 2e10;
  EXPECT_NEAR(curve->seconds(3 * kMiB), 3 * kMiB * 1.5 / busbw_3mib, 1e-12);
  // Measured points come back exactly.
  EXPECT_NEAR(curve->seconds(kMiB), 1.572864e-4, 1e-12);
  EXPECT_NEAR(curve->seconds(4 * kMiB), 2.097152e-4, 1e-12);
  // Above the range: the largest size's busbw (30 GB/s); below: the smallest size's time.
  EXPECT_NEAR(curve->seconds(8 * kMiB), 8 * kMiB * 1.5 / 3e10, 1e-12);
  EXPECT_NEAR(curve->seconds(0.25 * kMiB), 1.572864e-4, 1e-12);
}

TEST(CollectiveCurve, BusBandwidthFactorsAreNcclTests) {
  // nccl-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, all-gather / reduce-scatter / alltoall
  // (n-1)/n, broadcast / reduce 1.
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::kBroadcast, 8), 1.0);
}

// Four GPUs, a 10 GB/s, 5 us link between every pair, carrying the two-point curve.
Cluster measured_mesh() {
  Cluster cluster = testing::gpus(4);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) cluster.add_link(i, j, testing::round_link(1e10, 5e-6));
  }
  cluster.collective_profile = two_points();
  return cluster;
}

double simulate_allreduce(const Cluster& cluster, std::vector<DeviceId> group, double bytes, bool simgrid,
                          CollectiveKind kind = CollectiveKind::kAllReduce,
                          std::optional<Transport> transport = std::nullopt) {
  ExecutionPlan plan = testing::empty_plan(cluster);
  plan.collective_fidelity = CollectiveFidelity::kPerPhase;
  if (transport) plan.transports.push_back(*transport);
  Task task;
  task.kind = TaskKind::kCollective;
  task.collective = kind;
  task.phase = Phase::kCollective;
  task.group = std::move(group);
  task.algorithm = CollectiveAlgorithm::kRing;
  task.bytes = bytes;
  if (transport) task.transport = 0;
  testing::add(plan, task);
  return simgrid ? make_simgrid_engine()->simulate(plan, cluster).makespan_seconds()
                 : estimate_step(plan, cluster).makespan_seconds;
}

TEST(MeasuredAllReduce, BothEnginesTakeTheCurveTimeWhereItApplies) {
  Cluster cluster = measured_mesh();
  const double curve = 2 * kMiB * 1.5 / 2e10;  // as derived above
  EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, true), curve, 1e-9);
  EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, false), curve, 1e-12);
  // The curve measured what the software reached: a transport's share of the links' rate (NCCL
  // over sockets) does not stretch it again, on either engine.
  Transport slow;
  slow.id = "slow";
  slow.link_rate_share = 0.5;
  EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, true, CollectiveKind::kAllReduce, slow), curve, 1e-9);
  EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, false, CollectiveKind::kAllReduce, slow), curve, 1e-12);
  // Link rate would be 2(N-1)(a + S/(N B)) = 6 (5 us + 2 MiB / 4 / 10 GB/s) = 344.6 us: the curve differs.
  const double link_rate = 6 * (5e-6 + 2 * kMiB / 4 / 1e10);
  EXPECT_GT(std::abs(curve - link_rate), 1e-4);
}

// nccl-tests' busbw is the hardware's for every collective (doc/PERFORMANCE.md): an all-gather or
// reduce-scatter of S = 2 MiB over 4 GPUs without a curve of its own takes the all-reduce curve's
// busbw at S (20 GB/s): t = S (n-1)/n / busbw = 2 MiB x 0.75 / 20 GB/s = 78.6 us, half the
// all-reduce's 2 MiB x 1.5 / 20 GB/s. Both engines.
TEST(MeasuredAllGather, WithoutItsOwnCurveTakesTheAllReducesBusBandwidth) {
  Cluster cluster = measured_mesh();
  const double expected = 2 * kMiB * 0.75 / 2e10;
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    EXPECT_NEAR(*measured_collective_seconds(kind, {0, 1, 2, 3}, 2 * kMiB, cluster), expected, 1e-12);
    EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, true, kind), expected, 1e-9);
    EXPECT_NEAR(simulate_allreduce(cluster, {0, 1, 2, 3}, 2 * kMiB, false, kind), expected, 1e-12);
  }
  // Below the smallest measured size (1 MiB at 10 GB/s) the time holds: 1 MiB x 0.75 / 10 GB/s.
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllGather, {0, 1, 2, 3}, 0.25 * kMiB, cluster),
              kMiB * 0.75 / 1e10, 1e-12);
  // Collectives the engines do not run have no measured time.
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kBroadcast, {0, 1, 2, 3}, kMiB, cluster).has_value());
}

TEST(MeasuredAllGather, ItsOwnCurveWinsOverTheAllReduces) {
  Cluster cluster = measured_mesh();
  CollectiveProfile profile = *cluster.collective_profile;
  CollectiveCurve gather{CollectiveKind::kAllGather, 4, {{kMiB, 5e9, "hand-made"}, {4 * kMiB, 5e9, "hand-made"}}};
  profile.curves.emplace(std::make_pair(CollectiveKind::kAllGather, 4), gather);
  cluster.collective_profile = std::make_shared<const CollectiveProfile>(profile);
  // 2 MiB x 0.75 / 5 GB/s; the reduce-scatter still reads the all-reduce's 20 GB/s.
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllGather, {0, 1, 2, 3}, 2 * kMiB, cluster),
              2 * kMiB * 0.75 / 5e9, 1e-12);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kReduceScatter, {0, 1, 2, 3}, 2 * kMiB, cluster),
              2 * kMiB * 0.75 / 2e10, 1e-12);
}

// An all-to-all takes its own measured curve (nccl-tests' alltoall_perf: busbw = algbw (n-1)/n),
// 2 MiB x 0.75 / 8 GB/s, and never the all-reduce's: without its own it has no measured time.
TEST(MeasuredAllToAll, TakesOnlyItsOwnCurve) {
  Cluster cluster = measured_mesh();
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllToAll, {0, 1, 2, 3}, 2 * kMiB, cluster).has_value());
  CollectiveProfile profile = *cluster.collective_profile;
  CollectiveCurve exchange{CollectiveKind::kAllToAll, 4, {{kMiB, 8e9, "hand-made"}, {4 * kMiB, 8e9, "hand-made"}}};
  profile.curves.emplace(std::make_pair(CollectiveKind::kAllToAll, 4), exchange);
  cluster.collective_profile = std::make_shared<const CollectiveProfile>(profile);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllToAll, {0, 1, 2, 3}, 2 * kMiB, cluster),
              2 * kMiB * 0.75 / 8e9, 1e-12);
}

TEST(MeasuredAllReduce, TheReportGivesWhatTheCollectiveAchievedAsAlgbwAndBusbw) {
  // The 2 MiB all-reduce timed by the curve at busbw 20 GB/s reports busbw 20 GB/s back, and
  // algbw = busbw / 1.5 (nccl-tests: busbw = algbw x 2(n-1)/n).
  Cluster cluster = measured_mesh();
  ExecutionPlan plan = testing::empty_plan(cluster);
  Task task;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kCollective;
  task.group = {0, 1, 2, 3};
  task.bytes = 2 * kMiB;
  testing::add(plan, task);
  Timeline timeline = estimate_step(plan, cluster).timeline;
  Json report = json_report("test", plan, cluster, timeline, compute_metrics(plan, cluster, timeline));
  const Json& entry = report["tasks"][0];
  EXPECT_EQ(entry["group_size"], 4);
  EXPECT_DOUBLE_EQ(entry["bytes"].get<double>(), 2 * kMiB);
  EXPECT_NEAR(entry["busbw_bytes_per_second"].get<double>(), 2e10, 1);
  EXPECT_NEAR(entry["algbw_bytes_per_second"].get<double>(), 2e10 / 1.5, 1);
  // The table of collectives says the curve timed it.
  const Json& row = report["collective_bandwidth"][0];
  EXPECT_EQ(row["timing"], "measured_curve");
  EXPECT_NEAR(row["busbw_bytes_per_second"].get<double>(), 2e10, 1);
}

TEST(MeasuredAllReduce, FallsBackToTheLinkRateRingWhereNoCurveApplies) {
  Cluster cluster = measured_mesh();
  // 3 GPUs: no 3-GPU curve, so the link-rate rings: NCCL's two channels, the triangle each way
  // with half the buffer: 2(N-1)(a + S/(2 N B)) = 4 (5 us + 1 MiB / 3 / (2 x 10 GB/s)).
  const std::vector<DeviceId> three = {0, 1, 2};
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllReduce, three, kMiB, cluster).has_value());
  const double ring = 4 * (5e-6 + kMiB / 3 / 2e10);
  EXPECT_NEAR(simulate_allreduce(cluster, three, kMiB, false), ring, 1e-12);
  EXPECT_NEAR(simulate_allreduce(cluster, three, kMiB, true), ring, 1e-9);
  // A perturbed link: the curve measured other hardware.
  Cluster degraded = measured_mesh();
  degraded.scale_link_bandwidth(0, 0.5);
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllReduce, {0, 1, 2, 3}, kMiB, degraded).has_value());
  // CPUs, or GPUs of two machines.
  Cluster other = measured_mesh();
  other.devices()[3].node = 1;
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllReduce, {0, 1, 2, 3}, kMiB, other).has_value());
  Cluster cpus = measured_mesh();
  cpus.devices()[0].spec.kind = DeviceKind::kCpu;
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllReduce, {0, 1, 2, 3}, kMiB, cpus).has_value());
  // One device or no bytes: nothing to do.
  EXPECT_EQ(*measured_collective_seconds(CollectiveKind::kAllReduce, {0}, kMiB, cluster), 0.0);
}

TEST(MeasuredAllReduce, CurvesTravelInPlanFilesResolvedCluster) {
  // `placesim simulate plan.json` reads the cluster from the plan: the same 2 MiB time as above.
  Cluster cluster = measured_mesh();
  Json json = write_cluster_json(cluster);
  Cluster read = read_cluster_json(JsonReader(json, "plan.json", "/cluster"));
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllReduce, {0, 1, 2, 3}, 2 * kMiB, read), 2 * kMiB * 1.5 / 2e10, 1e-12);
  EXPECT_EQ(read.collective_profile->find(CollectiveKind::kAllReduce, 4)->points[1].source,
            "hand-made row 2, with a comma");
  // Once a perturbation rescaled a link the curves no longer apply, and are not written.
  cluster.scale_link_bandwidth(0, 0.5);
  EXPECT_FALSE(write_cluster_json(cluster).contains("collective_profile"));
}

HardwareCatalog bundled() { return HardwareCatalog(fs::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"); }

std::vector<DeviceId> gpus_of(const Cluster& cluster) {
  std::vector<DeviceId> gpus;
  for (DeviceId d = 0; d < cluster.devices().size(); ++d) {
    if (cluster.device(d).spec.kind == DeviceKind::kGpu) gpus.push_back(d);
  }
  return gpus;
}

Cluster cluster_from(const std::string& text) {
  Json description = Json::parse(text);
  return build_cluster(JsonReader(description, "test.json"), bundled(), ".");
}

TEST(MeasuredAllReduce, Dgx1V100TakesVTrainsEightGpuCurve) {
  Cluster dgx1 = cluster_from(R"({"template": "dgx1_v100"})");
  ASSERT_TRUE(dgx1.collective_profile);
  std::vector<DeviceId> gpus = gpus_of(dgx1);
  ASSERT_EQ(gpus.size(), 8u);
  // hardware_profiles/collectives/vtrain_v100-sxm2-nvlink-8gpu.csv, 8 GPUs (vTrain
  // trace/v100/AR_GPU8_1M_1024M_LUT out-of-place): 16 MiB in 0.0002738 s, 32 MiB in 0.0004793 s.
  // busbw = S x 1.75 / t; 24 MiB lies ln(1.5)/ln(2) of the way in log(bytes).
  const double busbw_16 = 16 * kMiB * 1.75 / 0.0002738;
  const double busbw_32 = 32 * kMiB * 1.75 / 0.0004793;
  const double busbw_24 = busbw_16 + std::log(1.5) / std::log(2.0) * (busbw_32 - busbw_16);
  const double expected = 24 * kMiB * 1.75 / busbw_24;  // 379.1 us
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllReduce, gpus, 24 * kMiB, dgx1), expected, expected * 1e-5);
  // "collective_profile": "none" keeps the link-rate model.
  Cluster link_rate = cluster_from(R"({"template": "dgx1_v100", "collective_profile": "none"})");
  EXPECT_FALSE(link_rate.collective_profile);
  // Two machines: a group spanning both has no curve.
  Cluster two = cluster_from(R"({"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "ib_edr"}})");
  std::vector<DeviceId> all = gpus_of(two);
  ASSERT_EQ(all.size(), 16u);
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllReduce, all, 24 * kMiB, two).has_value());
}

// dgx_a100_80gb lists Azure's ND A100 v4 file, then vTrain's A100 curves: the 8-GPU all-reduce
// is Azure's (measured first), the 4-GPU one vTrain's (Azure has none). 48 MiB lies
// ln(1.5)/ln(2) of the way from 32 to 64 MiB in log(bytes). 4 GPUs (vtrain ...,4,33554432 and
// ...,4,67108864: busbw 177.099 and 185.111 GB/s): 48 MiB x 1.5 / 181.79 GB/s = 415.3 us. 8 GPUs
// (nd-a100-v4 32 MiB 132.77, 64 MiB 166.63 GB/s): 48 MiB x 1.75 / 152.57 GB/s = 577.3 us. Until
// 2026-12-03 the 4-GPU group took the link rate, 332.6 us.
TEST(MeasuredAllReduce, DgxA100EightyGbTakesVTrainsCurvesWhereAzureHasNone) {
  Cluster dgx = cluster_from(R"({"template": "dgx_a100_80gb"})");
  ASSERT_TRUE(dgx.collective_profile);
  std::vector<DeviceId> gpus = gpus_of(dgx);
  ASSERT_EQ(gpus.size(), 8u);
  const double f = std::log(1.5) / std::log(2.0);
  const double busbw_4 = 1.77099e11 + f * (1.85111e11 - 1.77099e11);
  const double busbw_8 = 1.3277e11 + f * (1.6663e11 - 1.3277e11);
  const std::vector<DeviceId> four(gpus.begin(), gpus.begin() + 4);
  const double four_seconds = 48 * kMiB * 1.5 / busbw_4, eight_seconds = 48 * kMiB * 1.75 / busbw_8;
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllReduce, four, 48 * kMiB, dgx), four_seconds,
              four_seconds * 1e-5);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllReduce, gpus, 48 * kMiB, dgx), eight_seconds,
              eight_seconds * 1e-5);
  EXPECT_NEAR(four_seconds, 415.3e-6, 0.1e-6);
  EXPECT_NEAR(eight_seconds, 577.3e-6, 0.1e-6);
}

// The DGX A100's 8-GPU all-gather and reduce-scatter are SuperBench's measured curves (an Azure
// ND A100 v4 VM): at 64 MiB nccl-tests printed 379.7 us and 356.1 us (busbw 64 MiB x 7/8 / t =
// 154.65 and 164.90 GB/s), slower than the all-reduce curve's bus bandwidth they took before
// (Azure's 8-GPU all-reduce: 166.63 GB/s at 64 MiB, 64 MiB x 7/8 / 166.63 GB/s = 352.4 us); the
// 8-GPU all-reduce stays Azure's (the first file that measured it), 4 GPUs keep the all-reduce's.
TEST(MeasuredCollectives, DgxA100AllGathersAndReduceScattersTakeSuperBenchsCurves) {
  for (const std::string& template_id : {std::string("dgx_a100"), std::string("dgx_a100_80gb")}) {
    SCOPED_TRACE(template_id);
    Cluster dgx = cluster_from(R"({"template": ")" + template_id + R"("})");
    std::vector<DeviceId> gpus = gpus_of(dgx);
    ASSERT_EQ(gpus.size(), 8u);
    EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllGather, gpus, 64 * kMiB, dgx), 379.7e-6, 0.05e-6);
    EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kReduceScatter, gpus, 64 * kMiB, dgx), 356.1e-6, 0.05e-6);
  }
  Cluster dgx = cluster_from(R"({"template": "dgx_a100_80gb"})");
  std::vector<DeviceId> gpus = gpus_of(dgx);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllReduce, gpus, 64 * kMiB, dgx), 64 * kMiB * 1.75 / 1.6663e11,
              1e-9);
  const std::vector<DeviceId> four(gpus.begin(), gpus.begin() + 4);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllGather, four, 48 * kMiB, dgx),
              *measured_collective_seconds(CollectiveKind::kAllReduce, four, 48 * kMiB, dgx) / 2, 1e-12);
}

// The DGX H100's 4-GPU all-to-all is xxrjun/nccl-tests-cluster's (node cnode3-002): at 64 MiB
// it takes nccl-tests' printed 189.00 us (busbw 64 MiB x 3/4 / 189.00 us = 266.31 GB/s); between
// 64 and 128 MiB (344.64 us) busbw is linear in log(bytes): at 96 MiB busbw_64 + log2(1.5) x
// (busbw_128 - busbw_64). The
// curve starts at 32 MiB, so a 1 MiB all-to-all is left to the link-rate model (nullopt), not
// charged the 32 MiB time; 8 GPUs keep OpenXLA's curve, which comes first.
TEST(MeasuredCollectives, DgxH100FourGpuAllToAllsTakeTheirMeasuredCurveWithinItsRange) {
  Cluster dgx = cluster_from(R"({"template": "dgx_h100"})");
  ASSERT_TRUE(dgx.collective_profile);
  const std::vector<DeviceId> gpus = gpus_of(dgx);
  ASSERT_EQ(gpus.size(), 8u);
  const std::vector<DeviceId> four(gpus.begin(), gpus.begin() + 4);
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllToAll, four, 64 * kMiB, dgx), 189.00e-6, 1e-12);
  const double busbw_64 = 64 * kMiB * 0.75 / 189.00e-6, busbw_128 = 128 * kMiB * 0.75 / 344.64e-6;
  EXPECT_NEAR(busbw_64, 266.31e9, 0.01e9);
  const double at_96 = 96 * kMiB * 0.75 / (busbw_64 + std::log2(1.5) * (busbw_128 - busbw_64));
  EXPECT_NEAR(*measured_collective_seconds(CollectiveKind::kAllToAll, four, 96 * kMiB, dgx), at_96, at_96 * 1e-9);
  EXPECT_FALSE(measured_collective_seconds(CollectiveKind::kAllToAll, four, 1 * kMiB, dgx));
  // The 4-GPU all-gather is still the quiet HGX run's, measured from 64 B.
  EXPECT_TRUE(measured_collective_seconds(CollectiveKind::kAllGather, four, 1 * kMiB, dgx));
  const CollectiveCurve* eight = dgx.collective_profile->find(CollectiveKind::kAllToAll, 8);
  ASSERT_NE(eight, nullptr);
  EXPECT_EQ(eight->points.front().bytes, 1024);  // OpenXLA's, from 1 KiB
}

TEST(MeasuredAllReduce, EveryBundledProfileReads) {
  for (const auto& entry : fs::directory_iterator(fs::path(PLACESIM_SOURCE_DIR) / "hardware_profiles" / "collectives")) {
    if (entry.path().extension() != ".csv") continue;
    CollectiveProfile profile = read_collective_profile(entry.path());
    EXPECT_FALSE(profile.curves.empty()) << entry.path();
  }
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

// A list of profiles merges them: each (collective, GPUs) curve from the first file that measured
// it. The DGX H100 names Azure's nccl-tests all-reduce (8 GPUs) first, then OpenXLA's measured
// sm_90 table, which supplies the 8-GPU all-gather, reduce-scatter and all-to-all.
TEST(MeasuredCollectives, AListOfProfilesTakesEachCurveFromTheFirstThatMeasuredIt) {
  const std::string header =
      "system,collective,gpus,bytes,algbw_bytes_per_second,busbw_bytes_per_second,seconds,source\n";
  fs::path first = write_temp("first.csv", header + "first,all_reduce,4,1048576,1,1,1e-4,first file\n");
  fs::path second = write_temp("second.csv", header + "second,all_reduce,4,1048576,1,1,9e-4,second file\n" +
                                                  "second,all_gather,4,1048576,1,1,2e-4,second file\n");
  Cluster cluster = cluster_from(R"({"template": "dgx1_v100", "collective_profile": [")" + first.string() + R"(", ")" +
                                 second.string() + R"("]})");
  ASSERT_TRUE(cluster.collective_profile);
  EXPECT_EQ(cluster.collective_profile->system, "first + second");
  // The all-reduce from the first file (1e-4 s at 1 MiB), the all-gather from the second.
  const CollectiveCurve* reduce = cluster.collective_profile->find(CollectiveKind::kAllReduce, 4);
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce->points.front().source, "first file");
  EXPECT_NEAR(reduce->seconds(kMiB), 1e-4, 1e-12);
  const CollectiveCurve* gather = cluster.collective_profile->find(CollectiveKind::kAllGather, 4);
  ASSERT_TRUE(gather);
  EXPECT_NEAR(gather->seconds(kMiB), 2e-4, 1e-12);
  // "none" stands alone; an empty list names its path.
  std::string none = error_of([&] {
    cluster_from(R"({"template": "dgx1_v100", "collective_profile": ["none", ")" + first.string() + R"("]})");
  });
  EXPECT_NE(none.find("/collective_profile/0: \"none\" stands alone"), std::string::npos) << none;
  std::string empty = error_of([] { cluster_from(R"({"template": "dgx1_v100", "collective_profile": []})"); });
  EXPECT_NE(empty.find("/collective_profile: expected 1 to 8 collective profiles, got 0"), std::string::npos) << empty;

  Cluster dgx_h100 = cluster_from(R"({"template": "dgx_h100"})");
  ASSERT_TRUE(dgx_h100.collective_profile);
  EXPECT_EQ(dgx_h100.collective_profile->system,
            "nd-h100-v5 + do-h100-sxm5 + hgx-h100-sxm5 + xla-h100-sxm5-nvswitch-8gpu + xxrjun-c01-h100-sxm5");
  const CollectiveCurve* azure = dgx_h100.collective_profile->find(CollectiveKind::kAllReduce, 8);
  ASSERT_TRUE(azure);
  EXPECT_NE(azure->points.front().source.find("Azure"), std::string::npos);
  // OpenXLA's sm_90 all-gather over one group of 8 with an F32 output of 536870912 elements
  // (2 GiB): network_throughput_bytes_per_sec 401897616481 = algbw, so t = 2^31 / 4.01898e11 =
  // 5.3434 ms and busbw = algbw x 7/8 = 351.7 GB/s.
  const CollectiveCurve* xla_gather = dgx_h100.collective_profile->find(CollectiveKind::kAllGather, 8);
  ASSERT_TRUE(xla_gather);
  EXPECT_NE(xla_gather->points.back().source.find("openxla/xla"), std::string::npos);
  EXPECT_EQ(xla_gather->points.back().bytes, 2147483648.0);
  EXPECT_NEAR(xla_gather->seconds(2147483648.0), 2147483648.0 / 401897616481.0, 1e-8);
  EXPECT_NEAR(xla_gather->points.back().busbw_bytes_per_second, 401897616481.0 * 7 / 8, 401897616481.0 * 1e-5);
  // Groups of 2 and 4 inside the machine take nccl-tests' curves: the 2-GPU all-reduce of 1 GiB
  // took 2996.1 us out of place (busbw = algbw for 2 ranks: 2^30 / 2996.1e-6 = 358.4 GB/s), the
  // 4-GPU all-reduce of 1 GiB 4532.51 us (busbw = algbw x 2 x 3/4 = 355.3 GB/s), the 4-GPU
  // all-gather of 1 GiB 2459.19 us.
  const CollectiveCurve* two = dgx_h100.collective_profile->find(CollectiveKind::kAllReduce, 2);
  ASSERT_TRUE(two);
  EXPECT_NE(two->points.front().source.find("nccl-digitalocean-guide"), std::string::npos);
  EXPECT_NEAR(two->seconds(1073741824.0), 2996.1e-6, 1e-12);
  EXPECT_NEAR(two->points.back().busbw_bytes_per_second, 1073741824.0 / 2996.1e-6, 1e3);
  const CollectiveCurve* four = dgx_h100.collective_profile->find(CollectiveKind::kAllReduce, 4);
  ASSERT_TRUE(four);
  EXPECT_NEAR(four->seconds(1073741824.0), 4532.51e-6, 1e-12);
  EXPECT_NEAR(four->busbw_bytes_per_second(1073741824.0), 1073741824.0 / 4532.51e-6 * 1.5, 1e4);
  const CollectiveCurve* four_gather = dgx_h100.collective_profile->find(CollectiveKind::kAllGather, 4);
  ASSERT_TRUE(four_gather);
  EXPECT_NEAR(four_gather->seconds(1073741824.0), 2459.19e-6, 1e-12);
  EXPECT_FALSE(dgx_h100.collective_profile->find(CollectiveKind::kAllGather, 2));  // not measured: link rate
  EXPECT_FALSE(dgx_h100.collective_profile->find(CollectiveKind::kAllToAll, 2));  // not measured: link rate
}

TEST(CollectiveProfileErrors, NameTheFileLineColumnAndValue) {
  std::string header = "system,collective,gpus,bytes,algbw_bytes_per_second,busbw_bytes_per_second,seconds,source\n";
  // Windows line ends are fine.
  fs::path crlf = write_temp("crlf.csv", "system,collective,gpus,bytes,algbw_bytes_per_second,busbw_bytes_per_second,"
                                         "seconds,source\r\ns,all_reduce,4,1024,1,1,1e-5,src\r\n");
  EXPECT_EQ(read_collective_profile(crlf).find(CollectiveKind::kAllReduce, 4)->points.size(), 1u);
  fs::path bad_time = write_temp("bad_time.csv", header + "s,all_reduce,4,1024,1,1,-3,src\n");
  EXPECT_EQ(error_of([&] { read_collective_profile(bad_time); }),
            bad_time.string() + ": line 2 column seconds: expected a positive number, got \"-3\"");
  fs::path bad_kind = write_temp("bad_kind.csv", header + "s,allreduce,4,1024,1,1,1e-5,src\n");
  EXPECT_NE(error_of([&] { read_collective_profile(bad_kind); }).find("line 2 column collective: unknown collective \"allreduce\""),
            std::string::npos);
  fs::path twice = write_temp("twice.csv", header + "s,all_reduce,4,1024,1,1,1e-5,a\ns,all_reduce,4,1024,1,1,2e-5,b\n");
  EXPECT_NE(error_of([&] { read_collective_profile(twice); }).find("line 3 column bytes"), std::string::npos);
  // A cluster naming a profile that does not exist: the JSON path and the value.
  std::string missing = error_of([] { cluster_from(R"({"template": "dgx1_v100", "collective_profile": "nope"})"); });
  EXPECT_NE(missing.find("test.json: /collective_profile: no collective profile \"nope\""), std::string::npos) << missing;
}

// nccl-tests output as all_reduce_perf prints it (the current layout with "root"; the first rank
// line without "#", as in some logs), 4 ranks on one host.
const char* const kLog =
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#\n"
    "# Using devices\n"
    "   Rank  0 Group  0 Pid   100 on hostA device  0 [0x04] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid   101 on hostA device  1 [0x05] NVIDIA H100 80GB HBM3\n"
    "#  Rank  2 Group  0 Pid   102 on hostA device  2 [0x0b] NVIDIA H100 80GB HBM3\n"
    "#  Rank  3 Group  0 Pid   103 on hostA device  3 [0x0c] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#                                                              out-of-place                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
    "     1048576        262144     float     sum      -1    100.0   10.49   15.73      0     99.0   10.59   15.89      0\n"
    "     2097152        524288     float     sum      -1    160.0   13.11   19.66      0    159.0   13.19   19.78      0\n"
    "     4194304       1048576     float     sum      -1    250.0   16.78   25.17      0    249.0   16.84   25.27      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 20.19\n";

TEST(NcclTestsLog, BecomesAProfileOfOutOfPlaceTimes) {
  fs::path log_path = write_temp("all_reduce.log", kLog);
  NcclTestsLog log = parse_nccl_tests_log(log_path);
  EXPECT_EQ(log.ranks, 4);
  EXPECT_EQ(log.hosts, 1);
  EXPECT_EQ(log.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(log.rows.size(), 3u);
  EXPECT_EQ(log.rows[1].line, 13);
  check_nccl_tests_kind(log, CollectiveKind::kAllReduce, log_path.string());  // 25.17 / 16.78 = 1.5
  fs::path csv = write_temp("from_log.csv", nccl_tests_profile_csv(log, CollectiveKind::kAllReduce, "box", "my log"));
  CollectiveProfile profile = read_collective_profile(csv);
  const CollectiveCurve* curve = profile.find(CollectiveKind::kAllReduce, 4);
  ASSERT_NE(curve, nullptr);
  // 2 MiB was measured at 160 us (out-of-place); 3 MiB: busbw between 2 MiB (2 MiB x 1.5 / 160 us)
  // and 4 MiB (4 MiB x 1.5 / 250 us) at ln(1.5)/ln(2).
  EXPECT_NEAR(curve->seconds(2 * kMiB), 160e-6, 1e-11);
  const double busbw_2 = 2 * kMiB * 1.5 / 160e-6, busbw_4 = 4 * kMiB * 1.5 / 250e-6;
  EXPECT_NEAR(curve->seconds(3 * kMiB), 3 * kMiB * 1.5 / (busbw_2 + std::log(1.5) / std::log(2.0) * (busbw_4 - busbw_2)),
              1e-11);
  EXPECT_EQ(curve->points[1].source, "my log line 13 out-of-place (upstream busbw 19.66 GB/s; 4 ranks on 1 hosts; "
                                     "NVIDIA H100 80GB HBM3)");
  // The log's busbw / algbw (1.5) is not all-gather's (n-1)/n = 0.75 over 4 GPUs.
  std::string wrong = error_of([&] { check_nccl_tests_kind(log, CollectiveKind::kAllGather, log_path.string()); });
  EXPECT_NE(wrong.find(log_path.string() + ": line 14: busbw / algbw = 1.5"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("this fits all_reduce"), std::string::npos) << wrong;
}

TEST(NcclTestsLog, RejectsLogsWithoutRanksOrRows) {
  fs::path no_ranks = write_temp("no_ranks.log", "#  size count type redop root time algbw busbw #wrong\n 8 2 float sum -1 10 0 0 0\n");
  EXPECT_NE(error_of([&] { parse_nccl_tests_log(no_ranks); }).find("Rank N"), std::string::npos);
  std::string text = kLog;
  text.replace(text.find("    160.0"), 9, "      abc");
  fs::path bad_row = write_temp("bad_row.log", text);
  std::string truncated = kLog;
  truncated.replace(truncated.find("   25.17"), std::string::npos, "\n");
  fs::path short_row = write_temp("short_row.log", truncated);
  EXPECT_NE(error_of([&] { parse_nccl_tests_log(short_row); }).find(short_row.string() + ": line 14: a result row with 7 fields"),
            std::string::npos)
      << error_of([&] { parse_nccl_tests_log(short_row); });
  EXPECT_NE(error_of([&] { parse_nccl_tests_log(bad_row); }).find(bad_row.string() + ": line 13: expected time"),
            std::string::npos);
}


// Both readers take user-named files (a cluster's "collective_profile", `calibrate
// --from-nccl-tests LOG`): a FIFO is refused at once, not waited on, and a file above the input
// size limit is refused before it is read, as every input is (docs/reliability.md).
TEST(CollectiveProfileFiles, AFifoIsRefusedWithoutWaitingAndTheSizeLimitHolds) {
  const fs::path fifo = write_temp("pipe.csv", "").replace_extension(".fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // no writer: a plain open for reading would block forever
  const auto start = std::chrono::steady_clock::now();
  const std::string profile = error_of([&] { read_collective_profile(fifo); });
  const std::string log = error_of([&] { parse_nccl_tests_log(fifo); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(profile.find(fifo.string() + ": is a named pipe (FIFO), not a regular file"), std::string::npos) << profile;
  EXPECT_NE(log.find(fifo.string() + ": is a named pipe (FIFO), not a regular file"), std::string::npos) << log;
  fs::remove(fifo);

  const fs::path log_path = write_temp("limit.log", kLog);
  const fs::path csv = write_temp("limit.csv", nccl_tests_profile_csv(parse_nccl_tests_log(log_path), CollectiveKind::kAllReduce,
                                                                      "test_system", "test"));
  ASSERT_NO_THROW(read_collective_profile(csv));
  set_input_size_limit(100);
  const std::string too_large_profile = error_of([&] { read_collective_profile(csv); });
  const std::string too_large_log = error_of([&] { parse_nccl_tests_log(log_path); });
  set_input_size_limit(kDefaultInputSizeLimitBytes);
  EXPECT_NE(too_large_profile.find(csv.string() + ": is " + std::to_string(fs::file_size(csv)) +
                                   " bytes, above the input size limit of 100 bytes"),
            std::string::npos)
      << too_large_profile;
  EXPECT_NE(too_large_log.find("above the input size limit of 100 bytes"), std::string::npos) << too_large_log;
}

}  // namespace
}  // namespace collective_profile_test
}  // namespace placesim
