// PipeDream's partitioner (sim/auto_placement/pipedream_partitioner.h) on chains whose best
// partitions are worked out by hand, and "stage_replicas": "auto" resolved on a real model: VGG-16
// on two DGX-1s cut into two stages gets PipeDream's published "15-1" (SOSP 2019, Table 1) with
// the cut between the convolutions and the fully connected layers; left to choose the depth it
// answers data parallelism where that simulates faster, as PipeDream's optimizer may ("16").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/auto_placement/pipedream_partitioner.h"
#include "sim/core/units_format.h"
#include "sim/report/comparison_report.h"
#include "sim/report/pipeline_metrics.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/automatic_stages.h"
#include "sim/session/pipeline.h"

namespace placesim {
namespace pipedream_partitioner_test {  // a unity batch holds several test files
namespace {

/// Four ops: compute 4, 4, 4, 1 s per stream's batch; only the last has weights (100 bytes),
/// all-reduced in 2 (n - 1) / n x bytes x 0.1 s; transfers free unless `heavy_cut` (after op 2:
/// 2 s on its sending replica, 0.5 s on its receiving one).
PartitionChain four_ops(bool heavy_cut) {
  PartitionChain chain;
  chain.compute_seconds = {4, 4, 4, 1};
  chain.gradient_bytes = {0, 0, 0, 100};
  chain.may_end_stage = {true, true, true, true};
  chain.boundary_seconds = [heavy_cut](size_t after, int64_t, int64_t, int64_t, int64_t, int64_t) {
    return heavy_cut && after == 2 ? std::make_pair(2.0, 0.5) : std::make_pair(0.0, 0.0);
  };
  chain.all_reduce_seconds = [](double bytes, int64_t, int64_t count) {
    return 2.0 * static_cast<double>(count - 1) / static_cast<double>(count) * bytes * 0.1;
  };
  return chain;
}

// Over 4 replicas the slowest stage takes at least 4 s: ops 0-1 hold 8 s of compute, so a stage
// with both needs 3 replicas (leaving ops 2-3, 5 s, to one), and op 0 alone on one replica takes
// 4 s. 3-1 (ops 0-2 on 3 replicas: 12 / 3 = 4; op 3 on one: 1) reaches it with the fewest
// stages; 2-2 after op 1 takes 5 (ops 2-3 on 2: max(5, 2 x 1/2 x 100 x 0.1 = 10) / 2).
TEST(PipeDreamPartitioner, FindsTheFewestStagesWhoseSlowestIsFastest) {
  const PipeDreamPartition partition = partition_pipedream(four_ops(false), 4, 0);
  EXPECT_EQ(partition.widths, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(partition.first, (std::vector<size_t>{0, 3}));
  EXPECT_DOUBLE_EQ(partition.seconds, 4);
  EXPECT_EQ(partition.stage_seconds, (std::vector<double>{4, 1}));
}

// With transfers after op 2 costing its sender 2 s and its receiver 0.5 s, every partition cut
// there has a stage at 6 s or more (3-1: 4 + 2 and 1 + 0.5), so the best cuts after op 0: 1-3,
// op 0 on one replica (4 s) and ops 1-3 on three, max(9, 2 x 2/3 x 100 x 0.1 = 40/3) / 3 = 40/9 s.
// Candidates come fastest first.
TEST(PipeDreamPartitioner, ChargesEachSideOfACutItsBusiestReplicasTransfers) {
  const std::vector<PipeDreamPartition> candidates = pipedream_partition_candidates(four_ops(true), 4, 0);
  ASSERT_FALSE(candidates.empty());
  const PipeDreamPartition& best = candidates.front();
  EXPECT_EQ(best.widths, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(best.first, (std::vector<size_t>{0, 1}));
  ASSERT_EQ(best.stage_seconds.size(), 2u);
  EXPECT_DOUBLE_EQ(best.stage_seconds[0], 4);
  EXPECT_NEAR(best.stage_seconds[1], 40.0 / 9.0, 1e-12);
  EXPECT_NEAR(best.seconds, 40.0 / 9.0, 1e-12);
  for (size_t c = 1; c < candidates.size(); ++c) EXPECT_GE(candidates[c].seconds, candidates[c - 1].seconds);
  // Forced to cut there: 3-1, its stage 0 with the 2 s of sending, its stage 1 with the 0.5 s of
  // receiving (2-2: 12 / 2 + 2 = 8; 1-3: 14).
  PartitionChain forced = four_ops(true);
  forced.may_end_stage = {false, false, true, true};
  const PipeDreamPartition three_one = partition_pipedream(forced, 4, 2);
  EXPECT_EQ(three_one.widths, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(three_one.stage_seconds, (std::vector<double>{6, 1.5}));
}

// Widths divide the widest. Cut only after op 0, over 4 replicas: 1-3 (4 s; ops 1-3
// max(9, 40/3) / 3 = 40/9 s) beats 2-2 (max(9, 10) / 2 = 5 s) and 3-1 (9 s). Over 5 replicas
// no candidate has 3-2 or 2-3 (2 does not divide 3). Three stages with two places to cut: none.
TEST(PipeDreamPartitioner, GivesEveryStageAWidthThatDividesTheWidest) {
  PartitionChain chain = four_ops(false);
  chain.may_end_stage = {true, false, false, true};
  const PipeDreamPartition four = partition_pipedream(chain, 4, 2);
  EXPECT_EQ(four.widths, (std::vector<int64_t>{1, 3}));
  EXPECT_NEAR(four.seconds, 40.0 / 9.0, 1e-12);
  const std::vector<PipeDreamPartition> five = pipedream_partition_candidates(chain, 5, 2);
  ASSERT_FALSE(five.empty());
  for (const PipeDreamPartition& candidate : five) {
    const int64_t widest = *std::max_element(candidate.widths.begin(), candidate.widths.end());
    for (int64_t width : candidate.widths) EXPECT_EQ(widest % width, 0) << width << " of " << widest;
  }
  EXPECT_THROW(partition_pipedream(chain, 4, 3), std::invalid_argument);
}

// Every stage holding weights (as "auto" asks): with weights on ops 0 and 3 only, 3 stages would
// leave one of ops 1-2 alone, weightless: no such partition (without the rule, 1-2-1 or 2-1-1 at
// 4 s); 2 stages still give 3-1 at 4 s (ops 0-2 with op 0's weights; op 3).
TEST(PipeDreamPartitioner, CanAskEveryStageToHoldWeights) {
  PartitionChain chain = four_ops(false);
  chain.gradient_bytes = {1, 0, 0, 100};
  EXPECT_DOUBLE_EQ(partition_pipedream(chain, 4, 3).seconds, 4);
  chain.every_stage_holds_weights = true;
  EXPECT_THROW(partition_pipedream(chain, 4, 3), std::invalid_argument);
  const PipeDreamPartition two = partition_pipedream(chain, 4, 2);
  EXPECT_EQ(two.widths, (std::vector<int64_t>{3, 1}));
  EXPECT_DOUBLE_EQ(two.seconds, 4);
}

// Around 3-1 (ops 0-2 on 3 replicas, op 3 on one; 4 s), the boundary moved by one place: after op
// 1 (ops 0-1 on 3: 8 / 3 s; ops 2-3 on one: 5 s; op 3's weights on one replica, no all-reduce) is
// 5 s; stage 1 must keep op 3, so nothing after. Two places: after op 0 too (ops 1-3 on one: 9 s),
// the faster estimate first. Asking every stage for weights leaves none (op 3 holds them all).
TEST(PipeDreamPartitioner, MovesOneBoundaryAtATimeForTheSearchAroundItsAnswer) {
  PartitionChain chain = four_ops(false);
  const PipeDreamPartition three_one = partition_pipedream(chain, 4, 2);
  ASSERT_EQ(three_one.first, (std::vector<size_t>{0, 3}));
  const std::vector<PipeDreamPartition> one = neighbouring_pipedream_partitions(chain, 4, three_one, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].widths, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(one[0].first, (std::vector<size_t>{0, 2}));
  EXPECT_DOUBLE_EQ(one[0].seconds, 5);
  EXPECT_DOUBLE_EQ(one[0].stage_seconds[0], 8.0 / 3.0);
  const std::vector<PipeDreamPartition> two = neighbouring_pipedream_partitions(chain, 4, three_one, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].first, (std::vector<size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(two[1].seconds, 9);
  chain.every_stage_holds_weights = true;
  EXPECT_TRUE(neighbouring_pipedream_partitions(chain, 4, three_one, 2).empty());
}

// VGG-16, batch 64 per stream, on the 16 V100s of two DGX-1s joined by 25 GbE, in two stages: the
// partitioner picks 15-1 with the fully connected layers (and the loss) alone on one GPU, as
// PipeDream's optimizer did for VGG-16 (SOSP 2019, Table 1: "15-1"); each stage's ops are named.
// With the depth given, data parallelism is no candidate: the note gives its throughput beside.
TEST(PipeDreamPartitioner, PicksFifteenOneForVggOnTwoDgx1s) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "placesim_pipedream_auto.json";
  std::ofstream(file) << R"({
    "model": {"zoo": "vgg16"},
    "cluster": {"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "eth_25g"}},
    "strategy": {"parallelism": {"stage_replicas": "auto", "pipeline": 2, "micro_batches": 4, "schedule": "pipedream"}},
    "simulation": {"tier": "analytical"},
    "run": {"batch_size": 64, "steps": 2}
  })";
  Scenario scenario = load_scenario(file, HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"));
  std::filesystem::remove(file);
  ASSERT_TRUE(scenario.strategies.front().parallelism->automatic_stages);
  EXPECT_EQ(scenario.strategies.front().parallelism->data, 16);  // the replicas to partition
  resolve_automatic_stages(&scenario);
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  EXPECT_FALSE(p.automatic_stages);
  EXPECT_EQ(p.stage_replicas, (std::vector<int64_t>{15, 1}));
  EXPECT_EQ(p.pipeline, 2);
  EXPECT_EQ(p.data, 15);
  ASSERT_EQ(p.stage_ops.size(), 2u);
  EXPECT_EQ(p.stage_ops[0].back(), "pool5/MaxPool");
  EXPECT_EQ(p.stage_ops[1].front(), "flatten/Reshape");
  EXPECT_EQ(p.stage_ops[1].back(), "loss/xent");
  EXPECT_NE(scenario.strategies.front().chosen_by.find("chose 15-1 over 16 GPUs"), std::string::npos) << scenario.strategies.front().chosen_by;
  // Beside it, what PipeDream's optimizer may answer when the depth is its own: data parallelism.
  EXPECT_NE(scenario.strategies.front().chosen_by.find("synchronous data parallelism over the same 16 devices simulates at"),
            std::string::npos)
      << scenario.strategies.front().chosen_by;
  // The report carries the choice: the note, and each stage's first and last op.
  const EvaluatedStrategy evaluated = evaluate_strategy(scenario, scenario.strategies.front(), false);
  ASSERT_TRUE(evaluated.pipeline);
  const Json report = pipeline_json(*evaluated.pipeline, scenario.cluster);
  EXPECT_EQ(report.at("chosen_by").get<std::string>(), scenario.strategies.front().chosen_by);
  EXPECT_EQ(report.at("per_stage").at(0).at("last_op").get<std::string>(), "pool5/MaxPool");
  EXPECT_EQ(report.at("per_stage").at(1).at("first_op").get<std::string>(), "flatten/Reshape");
  EXPECT_EQ(report.at("per_stage").at(1).at("op_count").get<size_t>(), p.stage_ops[1].size());
}

// A command given one strategy (`run`/`plan`/`place`/`converge --strategy NAME`) resolves that one
// alone: the search simulates pipelines, and another strategy's search is not what was asked for.
// A name that is no strategy's, or a strategy without "auto", resolves nothing.
TEST(PipeDreamPartitioner, ResolvesOnlyTheNamedStrategyWhenOneIsNamed) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "placesim_pipedream_only.json";
  std::ofstream(file) << R"({
    "model": {"zoo": "vgg16"},
    "cluster": {"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "eth_25g"}},
    "strategies": [
      {"name": "data parallel", "data_parallel": {"replicas": 16}},
      {"name": "auto", "parallelism": {"stage_replicas": "auto", "pipeline": 2, "micro_batches": 4, "schedule": "pipedream"}},
      {"name": "auto too", "parallelism": {"stage_replicas": "auto", "pipeline": 2, "micro_batches": 4, "schedule": "pipedream"}}
    ],
    "simulation": {"tier": "analytical"},
    "run": {"batch_size": 64, "steps": 2}
  })";
  Scenario scenario = load_scenario(file, HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"));
  std::filesystem::remove(file);
  ASSERT_EQ(scenario.strategies.size(), 3u);
  resolve_automatic_stages(&scenario, "nope");
  resolve_automatic_stages(&scenario, "data parallel");
  EXPECT_TRUE(scenario.strategies[1].parallelism->automatic_stages);
  EXPECT_TRUE(scenario.strategies[2].parallelism->automatic_stages);
  EXPECT_TRUE(scenario.strategies[2].chosen_by.empty());
  resolve_automatic_stages(&scenario, "auto too");
  EXPECT_TRUE(scenario.strategies[1].parallelism->automatic_stages);
  ASSERT_TRUE(scenario.strategies[2].parallelism);
  EXPECT_FALSE(scenario.strategies[2].parallelism->automatic_stages);
  EXPECT_EQ(scenario.strategies[2].parallelism->stage_replicas, (std::vector<int64_t>{15, 1}));
  EXPECT_EQ(scenario.strategies[2].name, "auto too");
}

// Left to choose the number of stages (no "pipeline"), the partitioner weighs synchronous data
// parallelism over the same devices against its pipelines, as PipeDream's optimizer does (Table 1
// answers "16", one stage on all 16 GPUs, for ResNet-50). The bundled VGG-16 file asks it on two
// clusters: on the DGX-1s data parallelism simulates faster than every pipeline proposed, and the
// strategy becomes it; on four 10 GbE servers of 4 GPUs 15-1 does, and stays. Each answer is
// checked against the other simulated on its own.
TEST(PipeDreamPartitioner, AnswersDataParallelismWhenItSimulatesFasterThanEveryPipeline) {
  Scenario scenario =
      load_scenario(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/pipedream_replicated_stages_vgg16.json",
                    HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"));
  std::vector<Strategy> automatic;
  for (const Strategy& strategy : scenario.strategies) {
    if (strategy.parallelism && strategy.parallelism->automatic_stages) automatic.push_back(strategy);
  }
  ASSERT_EQ(automatic.size(), 2u);
  scenario.strategies = automatic;
  // Each asked without a depth: a candidate data parallelism, the same devices, one replica each.
  for (const Strategy& strategy : automatic) EXPECT_EQ(strategy.parallelism->automatic_stages, 0);
  resolve_automatic_stages(&scenario);

  // The two DGX-1s: data parallelism over the 16 GPUs, the strategy's devices in order.
  const Strategy& dgx1 = scenario.strategies[0];
  ASSERT_FALSE(dgx1.parallelism);
  ASSERT_TRUE(dgx1.data_parallel);
  EXPECT_EQ(dgx1.data_parallel->replicas, automatic[0].parallelism->devices);
  EXPECT_NE(dgx1.chosen_by.find("chose data parallelism, one stage on all 16 GPUs"), std::string::npos) << dgx1.chosen_by;
  const EvaluatedStrategy data_parallel = evaluate_strategy(scenario, dgx1, false);
  // The note's figure is that strategy's own; the pipelines it beat are listed with theirs.
  EXPECT_NE(dgx1.chosen_by.find("simulates at " + format_number(data_parallel.result.samples_per_second(), "%.1f") +
                                " samples/s, faster than the fastest in simulation of 8 pipelines"),
            std::string::npos)
      << dgx1.chosen_by;
  EXPECT_NE(dgx1.chosen_by.find("15-1 "), std::string::npos) << dgx1.chosen_by;
  // Forced to two stages, the same partitioner's pipeline is slower in simulation.
  Scenario two_stages = scenario;
  two_stages.strategies = {automatic[0]};
  two_stages.strategies[0].parallelism->automatic_stages = 2;
  two_stages.strategies[0].parallelism->pipeline = 2;
  resolve_automatic_stages(&two_stages);
  ASSERT_TRUE(two_stages.strategies[0].parallelism);
  EXPECT_EQ(two_stages.strategies[0].parallelism->pipeline, 2);
  EXPECT_LT(evaluate_strategy(two_stages, two_stages.strategies[0], false).result.samples_per_second(),
            data_parallel.result.samples_per_second());
  // The report carries the choice in its data-parallel section.
  EXPECT_EQ(data_parallel_json(data_parallel.result.data_parallel).at("chosen_by").get<std::string>(), dgx1.chosen_by);

  // The 10 GbE servers: 15-1 stays, faster than the data parallelism the note gives beside it.
  const Strategy& ethernet = scenario.strategies[1];
  ASSERT_TRUE(ethernet.parallelism);
  EXPECT_EQ(ethernet.parallelism->stage_replicas, (std::vector<int64_t>{15, 1}));
  Strategy plain = ethernet;
  plain.parallelism.reset();
  plain.chosen_by.clear();
  DataParallelOptions& options = plain.data_parallel.emplace();  // PyTorch DDP, as the strategy asks
  options.replicas = automatic[1].parallelism->devices;
  options.algorithm = automatic[1].parallelism->algorithm;
  options.bucket_bytes = automatic[1].parallelism->bucket_bytes;
  options.communication = automatic[1].parallelism->communication;
  const double data_parallel_samples_per_second = evaluate_strategy(scenario, plain, false).result.samples_per_second();
  EXPECT_NE(ethernet.chosen_by.find("synchronous data parallelism over the same 16 devices simulates at " +
                                    format_number(data_parallel_samples_per_second, "%.1f")),
            std::string::npos)
      << ethernet.chosen_by;
  EXPECT_GT(evaluate_strategy(scenario, ethernet, false).result.samples_per_second(), data_parallel_samples_per_second);
}

}  // namespace
}  // namespace pipedream_partitioner_test
}  // namespace placesim
