// PipeDream's partitioner (sim/auto_placement/pipedream_partitioner.h) on chains whose best
// partitions are worked out by hand, and "stage_replicas": "auto" resolved on a real model: VGG-16
// on two DGX-1s gets PipeDream's published "15-1" (SOSP 2019, Table 1) with the cut between the
// convolutions and the fully connected layers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/auto_placement/pipedream_partitioner.h"
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

// VGG-16, batch 64 per stream, on the 16 V100s of two DGX-1s joined by 25 GbE: the partitioner
// picks 15-1 with the fully connected layers (and the loss) alone on one GPU, as PipeDream's
// optimizer did for VGG-16 (SOSP 2019, Table 1: "15-1"); each stage's ops are named.
TEST(PipeDreamPartitioner, PicksFifteenOneForVggOnTwoDgx1s) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "placesim_pipedream_auto.json";
  std::ofstream(file) << R"({
    "model": {"zoo": "vgg16"},
    "cluster": {"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "eth_25g"}},
    "strategy": {"parallelism": {"stage_replicas": "auto", "micro_batches": 4, "schedule": "pipedream"}},
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
  EXPECT_NE(p.automatic_stages_note.find("chose 15-1 over 16 GPUs"), std::string::npos) << p.automatic_stages_note;
  // Beside it, what PipeDream's optimizer may answer and "auto" does not build: data parallelism.
  EXPECT_NE(p.automatic_stages_note.find("synchronous data parallelism over the same 16 devices simulates at"),
            std::string::npos)
      << p.automatic_stages_note;
  // The report carries the choice: the note, and each stage's first and last op.
  const EvaluatedStrategy evaluated = evaluate_strategy(scenario, scenario.strategies.front(), false);
  ASSERT_TRUE(evaluated.pipeline);
  const Json report = pipeline_json(*evaluated.pipeline, scenario.cluster);
  EXPECT_EQ(report.at("chosen_by").get<std::string>(), p.automatic_stages_note);
  EXPECT_EQ(report.at("per_stage").at(0).at("last_op").get<std::string>(), "pool5/MaxPool");
  EXPECT_EQ(report.at("per_stage").at(1).at("first_op").get<std::string>(), "flatten/Reshape");
  EXPECT_EQ(report.at("per_stage").at(1).at("op_count").get<size_t>(), p.stage_ops[1].size());
}

}  // namespace
}  // namespace pipedream_partitioner_test
}  // namespace placesim
