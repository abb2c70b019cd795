// ZeRO stages 1-3 and FSDP (docs/llm-planning.md) on the data-parallel dimension of a 3D strategy:
// memory per device against the ZeRO paper's formulas, stage 3's traffic against 1.5x of plain
// data parallelism, and the closed-form tier against the analytical tier on the whole plan.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/session/pipeline.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "tests/support/closed_form_steps.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace zero_test {  // a unity batch holds several test files
namespace {

// The small GPT of testing::small_gpt_scenario.
std::string gpt_scenario(const std::string& parallelism, int nodes = 1, const std::string& simulation = "{}") {
  return testing::small_gpt_scenario(parallelism, nodes, simulation);
}

// Psi = 12 L h^2 + 13 L h + (V + T) h + 2h = 98,304 + 1,664 + 10,240 + 128 = 110,336 parameters.
constexpr double kPsi = 110336;

/// The static memory of replica `replica`'s device (stage 0, tensor rank 0).
StaticMemory device_static_memory(const std::string& scenario_text, int64_t replica = 0) {
  const Scenario scenario = testing::scenario_from_text(scenario_text);
  return plan_scenario(scenario).plan.static_memory.at(scenario.strategies.front().parallelism->device(replica, 0, 0));
}

// ZeRO (Rajbhandari et al. 2020, figure 1), mixed-precision Adam: K = 12, N_d = 4 replicas:
//   stage 0: (2 + 2 + K) Psi       = 16 Psi  = 1,765,376 bytes
//   stage 1: 2 Psi + 2 Psi + K Psi / N_d   = 7 Psi  = 772,352
//   stage 2: 2 Psi + (2 + K) Psi / N_d     = 5.5 Psi = 606,848
//   stage 3: (2 + 2 + K) Psi / N_d         = 4 Psi  = 441,344
TEST(Zero, MemoryPerDeviceFollowsTheZeroPapersFormula) {
  const double expected[] = {1765376, 772352, 606848, 441344};
  for (int stage = 0; stage <= 3; ++stage) {
    SCOPED_TRACE("stage " + std::to_string(stage));
    const StaticMemory memory =
        device_static_memory(gpt_scenario(R"({"data": 4, "zero": )" + std::to_string(stage) + "}"), 3);
    EXPECT_DOUBLE_EQ(memory.total(), expected[stage]);
    EXPECT_DOUBLE_EQ(memory.optimizer_state_bytes, stage >= 1 ? 12 * kPsi / 4 : 12 * kPsi);
    EXPECT_DOUBLE_EQ(memory.gradient_bytes, stage >= 2 ? 2 * kPsi / 4 : 2 * kPsi);
    EXPECT_DOUBLE_EQ(memory.parameter_bytes, stage >= 3 ? 2 * kPsi / 4 : 2 * kPsi);
  }
  // FSDP full sharding is stage 3.
  EXPECT_DOUBLE_EQ(device_static_memory(gpt_scenario(R"({"data": 4, "fsdp": "full"})")).total(), 4 * kPsi);
}

// Hybrid sharding on two DGX A100s with data 16: the 8 replicas of one machine share a shard,
// 16 Psi / 8 = 2 Psi = 220,672 bytes per device.
TEST(Zero, HybridShardingDividesByTheReplicasOfOneMachine) {
  EXPECT_DOUBLE_EQ(device_static_memory(gpt_scenario(R"({"data": 16, "fsdp": "hybrid"})", 2), 9).total(), 2 * kPsi);
  EXPECT_DOUBLE_EQ(device_static_memory(gpt_scenario(R"({"data": 16, "fsdp": "full"})", 2), 9).total(), kPsi);
}

/// Bytes each device sends in the collectives over all `data` replicas (the data-parallel
/// traffic) on a ring: nccl-tests' size x its bus factor, 2(n-1)/n S for an all-reduce of S,
/// (n-1)/n S for an all-gather or reduce-scatter of S.
double data_parallel_collective_bytes(const ExecutionPlan& plan, size_t replicas) {
  double bytes = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCollective && task.group.size() == replicas) {
      bytes += task.bytes * bus_bandwidth_factor(task.collective, static_cast<int>(replicas));
    }
  }
  return bytes;
}

// Plain data parallelism all-reduces the gradients, 2 (N_d - 1)/N_d Psi bytes per device on a
// ring; ZeRO 1 and 2 reduce-scatter and all-gather, the same; ZeRO 3 all-gathers the parameters in
// forward and in backward and reduce-scatters the gradients: 3 (N_d - 1)/N_d Psi, 1.5x.
TEST(Zero, StageThreeMovesOneAndAHalfTimesTheDataParallelTraffic) {
  const Scenario plain = testing::scenario_from_text(gpt_scenario(R"({"data": 4})"));
  const double all_reduce = data_parallel_collective_bytes(plan_scenario(plain).plan, 4);
  EXPECT_DOUBLE_EQ(all_reduce, 2 * 0.75 * 2 * kPsi);  // fp16 gradients of every parameter, 2(n-1)/n of them
  for (int stage : {1, 2}) {
    const Scenario zero = testing::scenario_from_text(gpt_scenario(R"({"data": 4, "zero": )" + std::to_string(stage) + "}"));
    EXPECT_DOUBLE_EQ(data_parallel_collective_bytes(plan_scenario(zero).plan, 4), all_reduce) << "stage " << stage;
  }
  const Scenario stage3 = testing::scenario_from_text(gpt_scenario(R"({"data": 4, "zero": 3})"));
  EXPECT_DOUBLE_EQ(data_parallel_collective_bytes(plan_scenario(stage3).plan, 4), 1.5 * all_reduce);
  // With M micro-batches each re-gathers the parameters twice: (2M + 1) / 2 x the all-reduce.
  const Scenario micro = testing::scenario_from_text(gpt_scenario(R"({"data": 4, "zero": 3, "pipeline": 2, "micro_batches": 4})"));
  // Two stages: each stage's group moves its own parameters; summed over the stages, Psi again.
  EXPECT_DOUBLE_EQ(data_parallel_collective_bytes(plan_scenario(micro).plan, 4), (2 * 4 + 1) / 2.0 * all_reduce);
}

// A 3D strategy's data-parallel all-reduces of one (stage, rank) run on one stream by default,
// each waiting for the one before; with "concurrent_collectives": c the k-th waits for the
// (k-c)-th and not for the ones between (Caffe2's Gloo ops, c = 4).
TEST(Zero, ConcurrentCollectivesWaitForTheOneCBack) {
  for (int concurrent : {1, 2, 3}) {
    const Scenario scenario = testing::scenario_from_text(gpt_scenario(
        R"({"data": 4, "bucket_bytes": 1, "concurrent_collectives": )" + std::to_string(concurrent) + "}"));
    const ExecutionPlan plan = plan_scenario(scenario).plan;
    std::vector<TaskId> reductions;
    for (TaskId t = 0; t < plan.tasks.size(); ++t) {
      if (plan.tasks[t].kind == TaskKind::kCollective && plan.tasks[t].name.find("dp-allreduce/") != std::string::npos) {
        reductions.push_back(t);
      }
    }
    ASSERT_GE(reductions.size(), 6u) << concurrent;  // one per op with weights
    for (size_t k = 0; k < reductions.size(); ++k) {
      const std::vector<TaskId>& deps = plan.tasks[reductions[k]].deps;
      auto waits_for = [&](size_t j) { return std::find(deps.begin(), deps.end(), reductions[j]) != deps.end(); };
      const size_t c = static_cast<size_t>(concurrent);
      if (k >= c) {
        EXPECT_TRUE(waits_for(k - c)) << "c " << c << ", reduction " << k;
      }
      for (size_t j = (k >= c ? k - c + 1 : 0); j < k; ++j) {
        EXPECT_FALSE(waits_for(j)) << "c " << c << ", " << k << " on " << j;
      }
    }
  }
}

// Sharding the optimizer state makes each update 1/N_d of the work; the step is not slower than
// plain data parallelism with stages 1 and 2 (same traffic), and stage 3 is (more traffic).
TEST(Zero, StageThreeStepIsSlowerThanPlainDataParallelism) {
  auto step = [](const std::string& parallelism) {
    const Scenario scenario = testing::scenario_from_text(gpt_scenario(parallelism));
    const PlannedScenario planned = plan_scenario(scenario);
    return estimate_step(planned.plan, scenario.cluster_for(scenario.strategies.front())).step_seconds;
  };
  const double plain = step(R"({"data": 8, "algorithm": "ring"})");
  EXPECT_LE(step(R"({"data": 8, "algorithm": "ring", "zero": 1})"), plain * (1 + 1e-9));
  EXPECT_GT(step(R"({"data": 8, "algorithm": "ring", "zero": 3})"), plain);
}

TEST(Zero, ClosedFormTierGivesTheAnalyticalStep) {
  for (const std::string& parallelism :
       {std::string(R"({"data": 2, "pipeline": 2, "tensor": 2, "micro_batches": 4, "zero": 3, "algorithm": "ring"})"),
        std::string(R"({"data": 2, "pipeline": 2, "tensor": 2, "micro_batches": 4, "zero": 1, "algorithm": "ring"})"),
        std::string(R"({"data": 4, "pipeline": 2, "tensor": 2, "micro_batches": 4, "fsdp": "hybrid", "algorithm": "ring"})")}) {
    SCOPED_TRACE(parallelism);
    const Scenario scenario =
        testing::scenario_from_text(gpt_scenario(parallelism, 4, R"({"symmetry": "representatives"})"));
    testing::expect_closed_form_gives_the_analytical_step(scenario);
  }
}

TEST(Zero, BadOptionsNameTheirJsonPath) {
  try {
    testing::scenario_from_text(gpt_scenario(R"({"data": 4, "zero": 3, "fsdp": "full"})"));
    FAIL() << "zero beside fsdp accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/strategy/parallelism/fsdp");
  }
  try {
    testing::scenario_from_text(gpt_scenario(R"({"data": 4, "zero": 4})"));
    FAIL() << "zero 4 accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/strategy/parallelism/zero");
  }
  try {
    testing::scenario_from_text(gpt_scenario(R"({"data": 4, "fsdp": "sharded"})"));
    FAIL() << "fsdp sharded accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/strategy/parallelism/fsdp");
  }
}

}  // namespace
}  // namespace zero_test
}  // namespace placesim
