// Context parallelism (docs/llm-planning.md, sim/planner/context_parallel.h): each of c context
// ranks runs 1/c of every op's tokens, gathers the whole sequence's keys and values before each
// attention and reduce-scatters their gradients after it, and reduces its weight gradients with
// the data-parallel replicas. Expected numbers are derived by hand from the GPT generator's shapes.
#include <gtest/gtest.h>

#include "sim/analytical/analytical_engine.h"
#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "tests/support/closed_form_steps.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace context_parallel_test {  // a unity batch holds several test files
namespace {

// The small GPT of testing::small_gpt_scenario.
std::string gpt_scenario(const std::string& parallelism, int nodes = 1, const std::string& simulation = "{}") {
  return testing::small_gpt_scenario(parallelism, nodes, simulation);
}

// Psi = 12 L h^2 + 13 L h + (V + T) h + 2h = 98,304 + 1,664 + 10,240 + 128 = 110,336 parameters.
constexpr double kPsi = 110336;

ExecutionPlan plan_of(const std::string& parallelism) {
  return plan_scenario(testing::scenario_from_text(gpt_scenario(parallelism))).plan;
}

/// The strategy's devices in its order ([TP, CP, PP, DP]): gpu(i) is its i-th.
DeviceId gpu(const std::string& parallelism, size_t i) {
  return testing::scenario_from_text(gpt_scenario(parallelism)).strategies.front().parallelism->devices.at(i);
}

const Task& task_named(const ExecutionPlan& plan, const std::string& name) {
  for (const Task& task : plan.tasks) {
    if (task.name == name) return task;
  }
  throw std::runtime_error("no task " + name);
}

std::vector<const Task*> collectives(const ExecutionPlan& plan, CollectiveKind kind, size_t group_size) {
  std::vector<const Task*> found;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCollective && task.collective == kind && task.group.size() == group_size) {
      found.push_back(&task);
    }
  }
  return found;
}

double forward_flops_on(const ExecutionPlan& plan, DeviceId device) {
  double flops = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCompute && task.phase == Phase::kForward && task.device == device) flops += task.flops;
  }
  return flops;
}

// Every op runs on T / c = 16 of the 32 tokens: a context rank's forward is half a whole
// replica's. The QKV projection's GEMM has B T / c = 8 x 16 = 128 rows (not 256); the scores'
// batched GEMM keeps the 8 samples x 8 heads = 64 matrices and the 32 keys, with 16 queries each.
TEST(ContextParallel, EachRankRunsItsShareOfTheTokens) {
  const ExecutionPlan whole = plan_of(R"({"data": 1})");
  const ExecutionPlan split = plan_of(R"({"context": 2})");
  const DeviceId first = gpu(R"({"context": 2})", 0), second = gpu(R"({"context": 2})", 1);
  ASSERT_GT(forward_flops_on(whole, first), 0);
  EXPECT_DOUBLE_EQ(forward_flops_on(split, first), forward_flops_on(whole, first) / 2);
  EXPECT_DOUBLE_EQ(forward_flops_on(split, second), forward_flops_on(whole, first) / 2);
  const Task& qkv = task_named(split, "r0/mb0/fwd/h.0/qkv");
  const GemmShape qkv_gemm = qkv.kernel->with_samples(qkv.kernel_samples).gemm;
  EXPECT_EQ(qkv_gemm.m, 128);
  EXPECT_EQ(qkv_gemm.n, 192);
  EXPECT_EQ(qkv_gemm.k, 64);
  const Task& scores = task_named(split, "r0/mb0/fwd/h.0/scores");
  const GemmShape scores_gemm = scores.kernel->with_samples(scores.kernel_samples).gemm;
  EXPECT_EQ(scores_gemm.batch, 64);
  EXPECT_EQ(scores_gemm.m, 16);
  EXPECT_EQ(scores_gemm.n, 32);
  EXPECT_EQ(scores_gemm.k, 8);
  // 2 x 64 x 16 x 32 x 8 = 524,288 FLOPs: half the whole sequence's 2 x 64 x 32 x 32 x 8.
  EXPECT_DOUBLE_EQ(scores.flops, 524288);
}

// Before each of the L = 2 attentions the context group all-gathers K and V of the whole sequence:
// 2 x B x T x h x 2 bytes = 2 x 8 x 32 x 64 x 2 = 65,536 bytes; after its backward it
// reduce-scatters their gradients, the same size. Nothing else moves between the two ranks but
// the weight gradients, all-reduced over data x context = 2 replicas: 2 Psi bytes in fp16.
TEST(ContextParallel, GathersKeysAndValuesAroundEachAttention) {
  const ExecutionPlan plan = plan_of(R"({"context": 2, "bucket_bytes": 1e9})");
  const auto gathers = collectives(plan, CollectiveKind::kAllGather, 2);
  const auto scatters = collectives(plan, CollectiveKind::kReduceScatter, 2);
  ASSERT_EQ(gathers.size(), 2u);
  ASSERT_EQ(scatters.size(), 2u);
  for (const Task* task : gathers) {
    EXPECT_DOUBLE_EQ(task->bytes, 65536);
    EXPECT_EQ(task->group, (std::vector<DeviceId>{gpu(R"({"context": 2})", 0), gpu(R"({"context": 2})", 1)}));
  }
  for (const Task* task : scatters) EXPECT_DOUBLE_EQ(task->bytes, 65536);
  double reduced = 0;
  for (const Task* task : collectives(plan, CollectiveKind::kAllReduce, 2)) reduced += task->bytes;
  EXPECT_DOUBLE_EQ(reduced, 2 * kPsi);
  // The scores wait for the gather; the QKV projection's backward for the reduce-scatter.
  const Task& scores = task_named(plan, "r0/mb0/fwd/h.1/scores");
  EXPECT_NE(std::find(scores.deps.begin(), scores.deps.end(), gathers[1]->id), scores.deps.end());
  const Task& qkv_backward = task_named(plan, "r1/mb0/bwd/h.0/qkv");
  bool waits = false;
  for (const Task* task : scatters) waits |= std::find(qkv_backward.deps.begin(), qkv_backward.deps.end(), task->id) != qkv_backward.deps.end();
  EXPECT_TRUE(waits);
}

// Device order [TP, CP, PP, DP] (the Llama 3 paper's figure 5): with tensor 2 x context 2 x data
// 2 on eight GPUs, replica q = d x 2 + k, rank r sits on GPU ((d x 1 + 0) x 2 + k) x 2 + r. Rank
// 0's context group is GPUs 0 and 2; its gather holds K and V of the heads it owns, 1/2 of them
// (32,768 bytes); its gradient all-reduce spans the four replicas: GPUs 0, 2, 4, 6 (GPU i is the
// strategy's i-th device).
TEST(ContextParallel, GroupsFollowTheLlamaThreeOrder) {
  const Scenario scenario = testing::scenario_from_text(gpt_scenario(R"({"tensor": 2, "context": 2, "data": 2})"));
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  EXPECT_EQ(p.replicas(), 4);
  EXPECT_EQ(p.device(1, 0, 0), p.devices[2]);
  EXPECT_EQ(p.device(2, 0, 1), p.devices[5]);
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  const auto gathers = collectives(plan, CollectiveKind::kAllGather, 2);
  ASSERT_FALSE(gathers.empty());
  EXPECT_DOUBLE_EQ(gathers.front()->bytes, 32768);
  EXPECT_EQ(gathers.front()->group, (std::vector<DeviceId>{p.devices[0], p.devices[2]}));
  bool data_group_found = false;
  for (const Task* task : collectives(plan, CollectiveKind::kAllReduce, 4)) {
    data_group_found |= task->group == std::vector<DeviceId>{p.devices[0], p.devices[2], p.devices[4], p.devices[6]};
  }
  EXPECT_TRUE(data_group_found);
}

// ZeRO 1 shards the optimizer state over data x context = 4 replicas: 12 Psi / 4 of it, and the
// fp16 parameters and gradients stay whole: (2 + 2 + 3) Psi = 772,352 bytes per device.
TEST(ContextParallel, ZeroShardsOverDataTimesContext) {
  const Scenario scenario = testing::scenario_from_text(gpt_scenario(R"({"context": 2, "data": 2, "zero": 1})"));
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  EXPECT_DOUBLE_EQ(plan.static_memory.at(scenario.strategies.front().parallelism->devices[3]).total(), 7 * kPsi);
}

// Two context ranks keep half the activations a whole replica keeps (each forward task's saved
// bytes halve), and the gathered K and V (65,536 bytes) are the only new buffer.
TEST(ContextParallel, ActivationsHalve) {
  const DeviceId first = gpu("{}", 0);
  auto saved = [first](const ExecutionPlan& plan) {
    double bytes = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute && task.phase == Phase::kForward && task.device == first) {
        bytes += task.output_bytes;
      }
    }
    return bytes;
  };
  ASSERT_GT(saved(plan_of(R"({"data": 1})")), 0);
  EXPECT_DOUBLE_EQ(saved(plan_of(R"({"context": 2})")), saved(plan_of(R"({"data": 1})")) / 2);
}

// The symmetric plan (one simulated device per stage) and the closed form give the whole plan's
// step. (Symmetry refuses a layout whose data x context ring mixes NVLink and network hops, as
// tensor 2 x context 2 x pipeline 2 x data 2 on two machines would.)
TEST(ContextParallel, SymmetryAndClosedFormGiveTheWholePlansStep) {
  const std::string parallelism = R"({"tensor": 2, "context": 2, "pipeline": 2, "micro_batches": 4, "algorithm": "ring"})";
  const Scenario whole = testing::scenario_from_text(gpt_scenario(parallelism));
  const Scenario symmetric = testing::scenario_from_text(gpt_scenario(parallelism, 1, R"({"symmetry": "representatives"})"));
  const Cluster& cluster = whole.cluster_for(whole.strategies.front());
  const double full = estimate_step(plan_scenario(whole).plan, cluster).step_seconds;
  const double mirrored = estimate_step(plan_scenario(symmetric).plan, cluster).step_seconds;
  EXPECT_NEAR(mirrored, full, 1e-12 * full);
  testing::expect_closed_form_gives_the_analytical_step(symmetric);
}

// Each rank takes 2 of the 2c chunks of a sequence: 32 tokens split for c = 8 (16 chunks of 2),
// not for c = 3 (6 chunks).
TEST(ContextParallel, RefusesASequenceThatDoesNotSplitIntoTwoChunksPerRank) {
  EXPECT_EQ(collectives(plan_of(R"({"context": 8})"), CollectiveKind::kAllGather, 8).size(), 2u);
  try {
    plan_of(R"({"context": 3})");
    FAIL() << "context 3 accepted for 32 tokens";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/strategy/parallelism/context");
    EXPECT_NE(std::string(error.what()).find("not a multiple of 6"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace context_parallel_test
}  // namespace placesim
