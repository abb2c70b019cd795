// The analytical tier against hand-derived numbers (chain = sum, parallel = max, one device =
// one task at a time, alpha-beta transfers and ring all-reduce), and against the SimGrid engine
// on small plans without contention, where the two must agree within 1%.
#include <gtest/gtest.h>

#include "sim/session/pipeline.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/engine/simgrid_engine.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::add;
using testing::compute_task;
using testing::empty_plan;
using testing::gpus;
using testing::round_link;
using testing::transfer_task;

constexpr double kRelative = 1e-9;

double estimate(const ExecutionPlan& plan, const Cluster& cluster) { return estimate_step(plan, cluster).makespan_seconds; }

TEST(Analytical, ChainTakesTheSumOfItsOps) {
  Cluster cluster = gpus(1);  // 1e12 FLOP/s
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId b = add(plan, compute_task(0, 2e12), {a});
  add(plan, compute_task(0, 3e12), {b});
  EXPECT_NEAR(estimate(plan, cluster), 1.0 + 2.0 + 3.0, kRelative);
}

TEST(Analytical, IndependentOpsOnTwoDevicesTakeTheLonger) {
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 3e12));
  add(plan, compute_task(1, 2e12));
  EXPECT_NEAR(estimate(plan, cluster), std::max(3.0, 2.0), kRelative);
}

TEST(Analytical, IndependentOpsOnOneDeviceRunOneAtATimeLowestIdFirst) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 3e12));
  add(plan, compute_task(0, 2e12));
  AnalyticalStepEstimate result = estimate_step(plan, cluster);
  EXPECT_NEAR(result.makespan_seconds, 3.0 + 2.0, kRelative);
  EXPECT_NEAR(result.timeline.tasks[0].end_seconds, 3.0, kRelative);
  EXPECT_NEAR(result.timeline.tasks[1].start_seconds, 3.0, kRelative);
  EXPECT_EQ(result.timeline.source, "analytical");
}

TEST(Analytical, PricesEachTaskOnceIntoTheCallersPricesAndReadsThemBack) {
  // A chain a (1 s) -> transfer of 1e9 bytes over 1 GB/s + 10 us -> b (2 s) on GPU 1.
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(/*bandwidth=*/1e9, /*latency=*/1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId t = add(plan, transfer_task(0, 1, 1e9), {a});
  add(plan, compute_task(1, 2e12), {t});
  TaskSeconds prices(plan.tasks.size());
  const AnalyticalStepEstimate first = estimate_step(plan, cluster, &prices);
  EXPECT_NEAR(first.makespan_seconds, estimate(plan, cluster), kRelative);  // the same timeline as without
  EXPECT_NEAR(prices.seconds[0], 1.0, kRelative);
  EXPECT_NEAR(prices.seconds[1], 1e-5 + 1.0, kRelative);
  EXPECT_NEAR(prices.seconds[2], 2.0, kRelative);
  // Read back, not priced again: a price set by the caller is the one scheduled.
  prices.seconds[0] = 5.0;
  EXPECT_NEAR(estimate_step(plan, cluster, &prices).makespan_seconds, 5.0 + 1e-5 + 1.0 + 2.0, kRelative);
  // A plan of the first tasks of another may share its prices; fewer prices than tasks is a bug.
  ExecutionPlan first_two = plan;
  first_two.tasks.pop_back();
  EXPECT_NEAR(estimate_step(first_two, cluster, &prices).makespan_seconds, 5.0 + 1e-5 + 1.0, kRelative);
  TaskSeconds too_few(2);
  EXPECT_THROW(estimate_step(plan, cluster, &too_few), std::logic_error);
}

TEST(Analytical, RunsOnlyTheHandledTasksAsIfTheOthersWereDone) {
  // GPU 0: a (1 s) -> b (2 s) -> c (3 s); GPU 1: d (4 s) after b. Handling a, c and d only:
  // b never runs, so c and d wait for a's end alone: c on GPU 0 from 1 s to 4 s, d on GPU 1 from
  // 0 s (its only dependency, b, is outside) to 4 s; b's interval stays empty.
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId b = add(plan, compute_task(0, 2e12), {a});
  TaskId c = add(plan, compute_task(0, 3e12), {a, b});
  TaskId d = add(plan, compute_task(1, 4e12), {b});
  const std::vector<bool> handled = {true, false, true, true};
  const AnalyticalStepEstimate some = estimate_step(plan, cluster, nullptr, &handled);
  EXPECT_NEAR(some.timeline.tasks[c].start_seconds, 1.0, kRelative);
  EXPECT_NEAR(some.timeline.tasks[c].end_seconds, 4.0, kRelative);
  EXPECT_NEAR(some.timeline.tasks[d].start_seconds, 0.0, kRelative);
  EXPECT_NEAR(some.makespan_seconds, 4.0, kRelative);
  EXPECT_EQ(some.timeline.tasks[b].duration(), 0.0);
  // All flags set: the whole plan's timeline (a, b, c chained: 6 s; d from 3 s to 7 s).
  const std::vector<bool> all(plan.tasks.size(), true);
  EXPECT_NEAR(estimate_step(plan, cluster, nullptr, &all).makespan_seconds, 7.0, kRelative);
  EXPECT_NEAR(estimate(plan, cluster), 7.0, kRelative);
  // One flag per task, or it is a bug.
  const std::vector<bool> short_flags = {true, true};
  EXPECT_THROW(estimate_step(plan, cluster, nullptr, &short_flags), std::logic_error);
  // The caller's successor lists, built once for several schedules, give the same timelines.
  const SuccessorLists successors = plan.successors();
  const AnalyticalStepEstimate shared = estimate_step(plan, cluster, nullptr, &handled, &successors);
  EXPECT_EQ(shared.timeline.tasks[c].end_seconds, some.timeline.tasks[c].end_seconds);
  EXPECT_EQ(shared.timeline.tasks[d].start_seconds, some.timeline.tasks[d].start_seconds);
  EXPECT_NEAR(estimate_step(plan, cluster, nullptr, nullptr, &successors).makespan_seconds, 7.0, kRelative);
  // Lists of another plan are a bug.
  ExecutionPlan shorter = plan;
  shorter.tasks.pop_back();
  const SuccessorLists other = shorter.successors();
  EXPECT_THROW(estimate_step(plan, cluster, nullptr, nullptr, &other), std::logic_error);
}

TEST(Analytical, DiamondTakesTheLongerBranch) {
  // a (1 s) -> {b on GPU 0 (2 s), c on GPU 1 (4 s)} -> d (1 s): 1 + max(2, 4) + 1 = 6 s.
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId b = add(plan, compute_task(0, 2e12), {a});
  TaskId c = add(plan, compute_task(1, 4e12), {a});
  add(plan, compute_task(0, 1e12), {b, c});
  EXPECT_NEAR(estimate(plan, cluster), 1.0 + std::max(2.0, 4.0) + 1.0, kRelative);
}

TEST(Analytical, TransferTakesLatencyPlusBytesOverBandwidth) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(/*bandwidth=*/1e9, /*latency=*/1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  add(plan, transfer_task(0, 1, 5e8), {a});
  // 1 s of compute, then alpha + S / B = 1e-5 + 5e8 / 1e9.
  EXPECT_NEAR(estimate(plan, cluster), 1.0 + 1e-5 + 5e8 / 1e9, kRelative);
}

TEST(Analytical, TwoTransfersOnOneLinkDoNotShareIt) {
  // No contention by construction: both take alpha + S/B, so the makespan is one transfer's.
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, transfer_task(0, 1, 5e8));
  add(plan, transfer_task(0, 1, 5e8));
  EXPECT_NEAR(estimate(plan, cluster), 1e-5 + 5e8 / 1e9, kRelative);
}

TEST(Analytical, RingAllReduceIsTwoNMinusOneRoundsOfAlphaPlusSOverNB) {
  const size_t n = 4;
  const double bandwidth = 1e10, latency = 5e-6, bytes = 1e8;
  Cluster cluster = gpus(n);
  for (size_t i = 0; i < n; ++i) cluster.add_link(i, (i + 1) % n, round_link(bandwidth, latency));
  ExecutionPlan plan = empty_plan(cluster);
  Task task;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kCollective;
  task.group = {0, 1, 2, 3};
  task.algorithm = CollectiveAlgorithm::kRingInRankOrder;  // one ring, 0-1-2-3
  task.bytes = bytes;
  add(plan, task);
  // 2(N-1) rounds, each alpha + (S/N)/B: 6 x (5e-6 + 2.5e7 / 1e10) = 15.03 ms.
  const double expected = 2.0 * (n - 1) * (latency + bytes / n / bandwidth);
  EXPECT_NEAR(estimate(plan, cluster), expected, expected * kRelative);
  // NCCL's channels run the cycle both ways, half the buffer each: 6 x (5e-6 + 1.25e7 / 1e10).
  plan.tasks[0].algorithm = CollectiveAlgorithm::kRing;
  const double both_ways = 2.0 * (n - 1) * (latency + bytes / (2 * n) / bandwidth);
  EXPECT_NEAR(estimate(plan, cluster), both_ways, both_ways * kRelative);
}

TEST(Analytical, ZeroCostTasksTakeNoTimeAndDoNotHoldTheDevice) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 0));
  add(plan, compute_task(0, 1e12), {a});
  EXPECT_NEAR(estimate(plan, cluster), 1.0, kRelative);
}

TEST(Analytical, StepIsTheMakespanOverTheSteps) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  plan.steps = 2;
  TaskId a = add(plan, compute_task(0, 1e12));
  add(plan, compute_task(0, 1e12), {a});
  EXPECT_NEAR(estimate_step(plan, cluster).step_seconds, 2.0 / 2, kRelative);
}

TEST(Analytical, ACycleIsAnError) {
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 1e12), {1});
  add(plan, compute_task(0, 1e12), {0});
  EXPECT_THROW(estimate_step(plan, cluster), std::runtime_error);
}

// Small plans without contention: the analytical tier and SimGrid within 1%.
TEST(AnalyticalVersusSimGrid, AChainAcrossTwoDevicesAgrees) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link(1e9, 1e-5));
  ExecutionPlan plan = empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1e12));
  TaskId t = add(plan, transfer_task(0, 1, 2e8), {a});
  TaskId b = add(plan, compute_task(1, 5e11), {t});
  add(plan, compute_task(0, 2e11), {a});
  TaskId back = add(plan, transfer_task(1, 0, 1e8), {b});
  add(plan, compute_task(0, 3e11), {back});
  double simulated = make_simgrid_engine()->simulate(plan, cluster).makespan_seconds();
  EXPECT_NEAR(estimate(plan, cluster), simulated, simulated * 0.01);
}

Scenario load(const Json& document) { return testing::scenario_from_json(document); }

TEST(AnalyticalVersusSimGrid, AnMlpOnOneGpuAgrees) {
  Scenario scenario = load(Json::parse(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
      "run": {"batch_size": 64, "steps": 2}})"));
  PlannedScenario planned = plan_scenario(scenario);
  double simulated = simulate_plan(planned.plan, scenario.cluster).metrics.makespan_seconds;
  EXPECT_NEAR(estimate(planned.plan, scenario.cluster), simulated, simulated * 0.01);
}

TEST(AnalyticalVersusSimGrid, ARingAllReduceOfTwoReplicasOverNvlinkAgrees) {
  // Two V100s joined by NVLink: one ring all-reduce per bucket, one flow per link direction.
  Scenario scenario = load(Json::parse(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
      "strategy": {"data_parallel": {"replicas": 2, "algorithm": "ring"}}, "run": {"batch_size": 64}})"));
  PlannedScenario planned = plan_scenario(scenario);
  double simulated = simulate_plan(planned.plan, scenario.cluster).metrics.makespan_seconds;
  EXPECT_NEAR(estimate(planned.plan, scenario.cluster), simulated, simulated * 0.01);
}

}  // namespace
}  // namespace placesim
