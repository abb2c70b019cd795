// Expert parallelism (docs/llm-planning.md#expert-parallelism, sim/planner/expert_parallel.h):
// each mixture-of-experts layer's E experts are spread over groups of e data-parallel replicas,
// E / e each; every replica routes its tokens, an all-to-all brings each expert the tokens the
// whole group routed to it, another brings the outputs back, and backward runs the two in
// reverse. Expected numbers are derived by hand from the Mixtral generator's shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "sim/analytical/analytical_engine.h"
#include "sim/core/input_error.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/session/pipeline.h"
#include "sim/session/tier_step.h"
#include "tests/support/closed_form_steps.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace expert_parallel_test {  // a unity batch holds several test files
namespace {

// A small Mixtral: L = 2 layers, h = 64, 4 heads (d = 16), 2 KV heads, FFN f = 128, E = 4
// experts, top 2, T = 32 tokens, V = 128; fp16 with Adam, batch 8 per data-parallel replica, on
// one DGX A100 (or `nodes`).
//   each expert: mlp_fc h x 2f + mlp_proj f x h = 16,384 + 8,192 = 24,576 parameters;
//   experts: L x E x 24,576 = 196,608;
//   dense: per block 2h + 2h^2 + 2hKd + hE = 128 + 8,192 + 4,096 + 256 = 12,672, x L = 25,344,
//          + embedding and head 2Vh = 16,384 + final norm h = 64: 41,792;
//   total 238,400.
// Each expert takes ceil(k T / E) = 2 x 32 / 4 = 16 rows per sample: 8 x 16 = 128 per replica.
std::string mixtral_scenario(const std::string& parallelism, int nodes = 1, const std::string& simulation = "{}") {
  return testing::small_parallel_scenario(R"({"zoo": "mixtral_8x7b", "parameters": {"layers": 2, "hidden": 64, "heads": 4,
             "kv_heads": 2, "ffn": 128, "experts": 4, "top_k": 2, "sequence": 32, "vocabulary": 128}})",
                                          parallelism, nodes, simulation);
}

constexpr double kExpertParameters = 196608;
constexpr double kDenseParameters = 41792;

Scenario scenario_of(const std::string& parallelism) { return testing::scenario_from_text(mixtral_scenario(parallelism)); }
ExecutionPlan plan_of(const std::string& parallelism) { return plan_scenario(scenario_of(parallelism)).plan; }
DeviceId gpu(const std::string& parallelism, size_t i) {
  return scenario_of(parallelism).strategies.front().parallelism->devices.at(i);
}

const Task* find_task(const ExecutionPlan& plan, const std::string& name) {
  for (const Task& task : plan.tasks) {
    if (task.name == name) return &task;
  }
  return nullptr;
}

std::vector<const Task*> collectives(const ExecutionPlan& plan, CollectiveKind kind) {
  std::vector<const Task*> found;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCollective && task.collective == kind) found.push_back(&task);
  }
  return found;
}

bool waits_for(const Task& task, TaskId id) { return std::find(task.deps.begin(), task.deps.end(), id) != task.deps.end(); }

TEST(ExpertParallel, TheModelHasTheHandCountedParameters) {
  EXPECT_DOUBLE_EQ(scenario_of(R"({"data": 1})").graph.totals().parameter_count, kExpertParameters + kDenseParameters);
}

// With data 4 x expert 2, replicas 0 and 2 (expert rank 0) hold experts 0 and 1, replicas 1 and
// 3 experts 2 and 3. Each held expert runs on the tokens both replicas of its group routed to it:
// a GEMM of 2 x 128 = 256 rows, twice the FLOPs; a device's forward FLOPs are unchanged (2
// experts x 2 x the rows instead of 4 x 1).
TEST(ExpertParallel, EachRankRunsItsExpertsOnTheGroupsTokens) {
  const std::string layout = R"({"data": 4, "expert": 2})";
  const ExecutionPlan plain = plan_of(R"({"data": 4})");
  const ExecutionPlan split = plan_of(layout);
  ASSERT_NE(find_task(split, "r0/mb0/fwd/h.0/expert_1/mlp_fc"), nullptr);
  EXPECT_EQ(find_task(split, "r0/mb0/fwd/h.0/expert_2/mlp_fc"), nullptr);
  EXPECT_NE(find_task(split, "r1/mb0/fwd/h.0/expert_2/mlp_fc"), nullptr);
  EXPECT_EQ(find_task(split, "r1/mb0/fwd/h.0/expert_0/mlp_fc"), nullptr);
  EXPECT_NE(find_task(split, "r2/mb0/fwd/h.1/expert_0/mlp_proj"), nullptr);
  EXPECT_NE(find_task(split, "r3/mb0/fwd/h.1/expert_3/mlp_proj"), nullptr);
  // Every replica still routes its own tokens to all four experts.
  EXPECT_NE(find_task(split, "r0/mb0/fwd/h.0/expert_3/dispatch"), nullptr);
  const Task& fc = *find_task(split, "r0/mb0/fwd/h.0/expert_1/mlp_fc");
  const GemmShape gemm = fc.kernel->with_samples(fc.kernel_samples).gemm;
  EXPECT_EQ(gemm.m, 256);
  EXPECT_EQ(gemm.n, 256);
  EXPECT_EQ(gemm.k, 64);
  EXPECT_DOUBLE_EQ(fc.flops, 2.0 * 256 * 256 * 64);
  auto forward_flops = [](const ExecutionPlan& plan, DeviceId device) {
    double flops = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute && task.phase == Phase::kForward && task.device == device) flops += task.flops;
    }
    return flops;
  };
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_GT(forward_flops(plain, gpu(layout, i)), 0);
    EXPECT_DOUBLE_EQ(forward_flops(split, gpu(layout, i)), forward_flops(plain, gpu(layout, i)));
  }
}

// Per layer and micro-batch four all-to-alls over each expert group ({0, 1} and {2, 3}): the
// dispatch, the combine and their gradients, each moving the rows a replica routes: E x B x 16
// rows x h x 2 bytes = 4 x 8 x 16 x 64 x 2 = 65,536 bytes. 2 layers x 4 x 2 groups = 16.
// The held expert waits for the dispatch all-to-all, which waits for both replicas' dispatches;
// the combine waits for the combine all-to-all; a dispatch's backward (also of an expert held
// elsewhere) for the gradient all-to-all.
TEST(ExpertParallel, AllToAllsRouteTheTokensBetweenTheGroup) {
  const std::string layout = R"({"data": 4, "expert": 2})";
  const ExecutionPlan plan = plan_of(layout);
  const auto exchanges = collectives(plan, CollectiveKind::kAllToAll);
  ASSERT_EQ(exchanges.size(), 16u);
  for (const Task* task : exchanges) {
    EXPECT_DOUBLE_EQ(task->bytes, 65536);
    EXPECT_EQ(task->algorithm, CollectiveAlgorithm::kPairwise);
    const bool first_group = task->group == std::vector<DeviceId>{gpu(layout, 0), gpu(layout, 1)};
    const bool second_group = task->group == std::vector<DeviceId>{gpu(layout, 2), gpu(layout, 3)};
    EXPECT_TRUE(first_group || second_group) << task->name;
  }
  const Task& dispatch = *find_task(plan, "r0/mb0/ep-alltoall/dispatch/h.0/moe_combine");
  for (const char* name : {"r0/mb0/fwd/h.0/expert_0/dispatch", "r0/mb0/fwd/h.0/expert_3/dispatch",
                           "r1/mb0/fwd/h.0/expert_0/dispatch", "r1/mb0/fwd/h.0/expert_3/dispatch"}) {
    EXPECT_TRUE(waits_for(dispatch, find_task(plan, name)->id)) << name;
  }
  EXPECT_TRUE(waits_for(*find_task(plan, "r1/mb0/fwd/h.0/expert_2/mlp_fc"), dispatch.id));
  const Task& combine = *find_task(plan, "r0/mb0/ep-alltoall/combine/h.0/moe_combine");
  EXPECT_TRUE(waits_for(combine, find_task(plan, "r1/mb0/fwd/h.0/expert_3/mlp_proj")->id));
  EXPECT_TRUE(waits_for(*find_task(plan, "r0/mb0/fwd/h.0/moe_combine"), combine.id));
  const Task& gradients = *find_task(plan, "r0/mb0/ep-alltoall/grad/dispatch/h.0/moe_combine");
  EXPECT_TRUE(waits_for(gradients, find_task(plan, "r1/mb0/bwd/h.0/expert_2/mlp_fc")->id));
  EXPECT_TRUE(waits_for(*find_task(plan, "r0/mb0/bwd/h.0/expert_3/dispatch"), gradients.id));
}

// An expert group is `expert` consecutive replicas whatever their number: replica 0's all-to-alls
// in a one-micro-batch cell plan (pipeline 2 x expert 2) run on the same two GPUs with the same
// bytes at data 4 (1 DGX A100), 8 (2) and 16 (4), so the search tier's screen shares one cell
// across these data widths (sim/session/sweep_screen.h).
TEST(ExpertParallel, ReplicaZerosAllToAllsAreTheSameAtEveryDataWidth) {
  auto exchanges_at = [](int64_t data, int nodes) {
    const std::string layout = R"({"pipeline": 2, "data": )" + std::to_string(data) + R"(, "expert": 2, "stage_split": "layers"})";
    const Scenario scenario = testing::scenario_from_text(mixtral_scenario(layout, nodes));
    const Strategy& strategy = scenario.strategies.front();
    PipelineCells cells;
    const ExecutionPlan plan =
        build_parallel_3d_cell_plan(scenario.graph, scenario.cluster_for(strategy), scenario.run, *strategy.parallelism, &cells);
    std::vector<std::tuple<std::vector<DeviceId>, double, CollectiveAlgorithm>> exchanges;
    for (const Task* task : collectives(plan, CollectiveKind::kAllToAll)) {
      exchanges.emplace_back(task->group, task->bytes, task->algorithm);
    }
    return exchanges;
  };
  const auto at_4 = exchanges_at(4, 1);
  // 2 MoE layers x (dispatch, combine) x (forward, backward), between replicas 0 and 1's GPUs
  // of each stage (devices 0 and 2 for stage 0: a replica spans its 2 stages).
  ASSERT_EQ(at_4.size(), 8u);
  for (const auto& [group, bytes, algorithm] : at_4) {
    EXPECT_EQ(group.size(), 2u);
    EXPECT_EQ(group[1] - group[0], 2u);
    EXPECT_EQ(algorithm, CollectiveAlgorithm::kPairwise);
  }
  EXPECT_EQ(exchanges_at(8, 2), at_4);
  EXPECT_EQ(exchanges_at(16, 4), at_4);
}

// With data 4 x expert 2 (`layout`): the `kind` collectives of the gradients carry the dense
// weights' 2 x 41,792 bytes over all 4 replicas and, over each pair of replicas holding the same
// experts ({0, 2} and {1, 3}), half the experts' parameters: 2 x 98,304 bytes.
void expect_gradients_over_holders(const ExecutionPlan& plan, const std::string& layout, CollectiveKind kind) {
  double dense = 0;
  std::map<std::vector<DeviceId>, double> expert_bytes;
  for (const Task* task : collectives(plan, kind)) {
    if (task->group.size() == 4) dense += task->bytes;
    if (task->group.size() == 2) expert_bytes[task->group] += task->bytes;
  }
  EXPECT_DOUBLE_EQ(dense, 2 * kDenseParameters);
  ASSERT_EQ(expert_bytes.size(), 2u);
  EXPECT_DOUBLE_EQ((expert_bytes[{gpu(layout, 0), gpu(layout, 2)}]), 2 * kExpertParameters / 2);
  EXPECT_DOUBLE_EQ((expert_bytes[{gpu(layout, 1), gpu(layout, 3)}]), 2 * kExpertParameters / 2);
}

// Gradients: the dense weights all-reduced over the 4 replicas (2 bytes x 41,792), each expert's
// over the 2 replicas holding it ({0, 2} for experts 0 and 1, {1, 3} for 2 and 3), half the
// experts' 196,608 parameters each: 2 x 98,304 bytes per group.
TEST(ExpertParallel, ExpertGradientsReduceOverTheReplicasHoldingThem) {
  const std::string layout = R"({"data": 4, "expert": 2, "bucket_bytes": 1e9})";
  const ExecutionPlan plan = plan_of(layout);
  expect_gradients_over_holders(plan, layout, CollectiveKind::kAllReduce);
}

// The optimizer steps with every gradient reduced, the experts' too: on each device every update,
// dense or expert, waits for the last expert-gradient all-reduce that device takes part in (the
// expert reductions follow the dense ones, so it is the device's last reduction of the step).
TEST(ExpertParallel, EveryUpdateWaitsForItsDevicesLastExpertReduction) {
  const ExecutionPlan plan = plan_of(R"({"data": 4, "expert": 2, "bucket_bytes": 1})");
  std::map<DeviceId, TaskId> last_expert_reduction;  // emission order is the chain's order
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.name.rfind("ep-dp-allreduce/", 0) != 0) continue;
    for (DeviceId device : task.group) last_expert_reduction[device] = task.id;
  }
  size_t updates = 0, dense = 0;
  for (const Task& task : plan.tasks) {
    if (task.phase != Phase::kOptimizer) continue;
    ++updates;
    dense += task.op.find("expert_") == std::string::npos;
    ASSERT_TRUE(last_expert_reduction.count(task.device)) << task.name;
    EXPECT_NE(std::find(task.deps.begin(), task.deps.end(), last_expert_reduction[task.device]), task.deps.end())
        << task.name;
  }
  EXPECT_GT(dense, 0u);
  EXPECT_GT(updates, dense);
}

// Memory: fp16 Adam keeps 2 + 2 + 12 = 16 bytes per parameter; a device holds the dense
// parameters and half the experts: 16 x (41,792 + 98,304) = 2,241,536 bytes (3,814,400 without
// expert parallelism). ZeRO 1 divides the dense optimizer state over the 4 replicas and the
// experts' over the 2 holding them: 4 x 140,096 + 12 x (41,792 / 4 + 98,304 / 2) = 560,384 + 715,200
// = 1,275,584 bytes.
TEST(ExpertParallel, EachDeviceHoldsItsExperts) {
  const Scenario scenario = scenario_of(R"({"data": 4, "expert": 2})");
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  const auto& devices = scenario.strategies.front().parallelism->devices;
  for (DeviceId device : devices) EXPECT_DOUBLE_EQ(plan.static_memory.at(device).total(), 2241536);
  EXPECT_DOUBLE_EQ(plan_of(R"({"data": 4})").static_memory.at(devices[1]).total(), 3814400);
  EXPECT_DOUBLE_EQ(plan_of(R"({"data": 4, "expert": 2, "zero": 1})").static_memory.at(devices[3]).total(), 1275584);
}

// An expert's shards divide over its holders in replica 0's shard group (replica q holds expert
// rank (q / context) mod expert): data 4 x expert 2 under ZeRO 1: replicas 0 and 2 of 4; with
// context 2 (8 replicas) replicas 0, 1, 4 and 5; FSDP's hybrid groups of 8 of 16 replicas at
// expert 2: 0, 2, 4, 6; groups of 4 of 8 at expert 4: replica 0 alone; without ZeRO nothing.
TEST(ExpertParallel, AnExpertsZeroShardsAreItsHoldersInOneShardGroup) {
  auto shards = [](int64_t data, int64_t expert, int zero, int64_t context = 1, int64_t group = 0) {
    ParallelismOptions options;
    options.data = data;
    options.expert = expert;
    options.zero_stage = zero;
    options.context = context;
    options.shard_group = group;
    return options.expert_zero_shards();
  };
  EXPECT_EQ(shards(4, 2, 1), 2);
  EXPECT_EQ(shards(4, 2, 2, 2), 4);
  EXPECT_EQ(shards(16, 2, 3, 1, 8), 4);
  EXPECT_EQ(shards(8, 4, 3, 1, 4), 1);
  EXPECT_EQ(shards(4, 2, 0), 1);
  EXPECT_EQ(shards(8, 1, 1), 8);  // every replica holds every expert
  // Shard groups that end inside a cycle of context x expert replicas: 6 of 12 at expert 4
  // (replicas 0 and 4), 6 of 12 at context 2 x expert 2 (replicas 0, 1, 4, 5).
  EXPECT_EQ(shards(12, 4, 1, 1, 6), 2);
  EXPECT_EQ(shards(6, 2, 1, 2, 6), 4);
}

// A cell plan records what of each stage's representative's static memory its experts hold, as
// EachDeviceHoldsItsExperts counts it: 16 x 98,304 = 1,572,864 bytes of parameters (2), gradients
// (2) and optimizer state (12) without ZeRO; under ZeRO 1 the optimizer state over the 2 holders,
// 12 x 98,304 / 2 = 589,824, of the device's 715,200.
TEST(ExpertParallel, ACellPlanRecordsItsExpertsStaticMemory) {
  for (int zero : {0, 1}) {
    const Scenario scenario = scenario_of(R"({"data": 4, "expert": 2, "zero": )" + std::to_string(zero) + "}");
    const Strategy& strategy = scenario.strategies.front();
    PipelineCells cells;
    const ExecutionPlan plan =
        build_parallel_3d_cell_plan(scenario.graph, scenario.cluster_for(strategy), scenario.run, *strategy.parallelism, &cells);
    ASSERT_EQ(cells.expert_static_memory.size(), 1u);
    const StaticMemory& experts = cells.expert_static_memory[0];
    EXPECT_DOUBLE_EQ(experts.parameter_bytes, 2 * 98304);
    EXPECT_DOUBLE_EQ(experts.gradient_bytes, 2 * 98304);
    EXPECT_DOUBLE_EQ(experts.optimizer_state_bytes, zero ? 589824 : 12 * 98304);
    EXPECT_DOUBLE_EQ(plan.static_memory.at(strategy.parallelism->device(0, 0, 0)).optimizer_state_bytes,
                     zero ? 715200 : 12 * (41792 + 98304));
  }
  PipelineCells dense;
  const Scenario scenario = scenario_of(R"({"data": 4, "zero": 1})");
  build_parallel_3d_cell_plan(scenario.graph, scenario.cluster_for(scenario.strategies.front()), scenario.run,
                              *scenario.strategies.front().parallelism, &dense);
  EXPECT_DOUBLE_EQ(dense.expert_static_memory.at(0).total(), 0);  // expert 1: every op's shards are the data width's
}

// ZeRO 3 (FSDP full sharding): the dense parameters sharded over the 4 replicas, each expert's
// over the 2 holding it: 16 x 41,792 / 4 + 16 x 98,304 / 2 = 167,168 + 786,432 = 953,600 bytes per
// device. Before use, an expert's parameters are all-gathered over its 2 holders (h.0's expert 1
// mlp_fc: 64 x 256 x 2 bytes = 32,768), a dense op's over all 4; after backward the gradients are
// reduce-scattered over the same groups: 2 x 41,792 bytes over the 4, 2 x 98,304 over each pair.
TEST(ExpertParallel, ZeroThreeShardsEachExpertOverItsHolders) {
  const std::string layout = R"({"data": 4, "expert": 2, "zero": 3, "bucket_bytes": 1e9})";
  const Scenario scenario = scenario_of(layout);
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  for (DeviceId device : scenario.strategies.front().parallelism->devices) {
    EXPECT_DOUBLE_EQ(plan.static_memory.at(device).total(), 953600);
  }
  const Task& gathered = *find_task(plan, "r0/mb0/fwd/zero3-allgather/h.0/expert_1/mlp_fc");
  EXPECT_DOUBLE_EQ(gathered.bytes, 32768);
  EXPECT_EQ(gathered.group, (std::vector<DeviceId>{gpu(layout, 0), gpu(layout, 2)}));
  EXPECT_EQ(find_task(plan, "r0/mb0/fwd/zero3-allgather/h.0/qkv")->group.size(), 4u);
  expect_gradients_over_holders(plan, layout, CollectiveKind::kReduceScatter);
  EXPECT_TRUE(collectives(plan, CollectiveKind::kAllReduce).empty());
}

// FSDP's hybrid sharding with data 16 x expert 2 on two DGX A100s: each machine's 8 replicas are
// a shard group, and an expert's 8 holders (the even replicas for experts 0 and 1) are 4 per
// machine, so its shards divide over those 4: 16 x 41,792 / 8 + 16 x 98,304 / 4 = 83,584 +
// 393,216 = 476,800 bytes per device (full sharding: 41,792 + 196,608 = 238,400). An expert's
// parameters are all-gathered over the 4 (h.0's expert 1 mlp_fc: 32,768 bytes over GPUs 0, 2, 4
// and 6); its gradients, 2 x 98,304 bytes, reduce-scattered over each machine's 4 and each
// quarter, 49,152 bytes, all-reduced across the two machines' replicas at the same position
// ({0, 8}, {2, 10}, ...), as the dense gradients are over the machine's 8 and across.
TEST(ExpertParallel, HybridShardingDividesEachExpertOverItsHoldersInOneMachine) {
  const std::string layout = R"({"data": 16, "expert": 2, "fsdp": "hybrid", "bucket_bytes": 1e9})";
  const Scenario scenario = testing::scenario_from_text(mixtral_scenario(layout, 2));
  const auto& devices = scenario.strategies.front().parallelism->devices;
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  for (DeviceId device : devices) EXPECT_DOUBLE_EQ(plan.static_memory.at(device).total(), 476800);
  auto gpus = [&](std::initializer_list<size_t> indices) {
    std::vector<DeviceId> group;
    for (size_t i : indices) group.push_back(devices.at(i));
    return group;
  };
  const Task& gathered = *find_task(plan, "r0/mb0/fwd/zero3-allgather/h.0/expert_1/mlp_fc");
  EXPECT_DOUBLE_EQ(gathered.bytes, 32768);
  EXPECT_EQ(gathered.group, gpus({0, 2, 4, 6}));
  // The second machine's gather, named by its first replica.
  EXPECT_EQ(find_task(plan, "r8/mb0/fwd/zero3-allgather/h.0/expert_1/mlp_fc")->group, gpus({8, 10, 12, 14}));
  EXPECT_EQ(find_task(plan, "r0/mb0/fwd/zero3-allgather/h.0/qkv")->group.size(), 8u);
  std::map<std::vector<DeviceId>, double> scattered, across;
  for (const Task* task : collectives(plan, CollectiveKind::kReduceScatter)) {
    if (task->name.rfind("ep-", 0) == 0) scattered[task->group] += task->bytes;
  }
  for (const Task* task : collectives(plan, CollectiveKind::kAllReduce)) {
    if (task->name.rfind("ep-", 0) == 0) across[task->group] += task->bytes;
  }
  ASSERT_EQ(scattered.size(), 4u);
  for (const auto& group : {gpus({0, 2, 4, 6}), gpus({8, 10, 12, 14}), gpus({1, 3, 5, 7}), gpus({9, 11, 13, 15})}) {
    EXPECT_DOUBLE_EQ(scattered[group], 2 * kExpertParameters / 2);
  }
  ASSERT_EQ(across.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ((across[gpus({i, i + 8})]), 2 * kExpertParameters / 2 / 4) << i;
  // Each replica updates its quarter of its experts' optimizer state after its own shard's
  // all-reduce (replica 10 holds shard 1: GPUs 2 and 10), not after another position's.
  const Task& update = *find_task(plan, "r10/opt/h.0/expert_1/mlp_fc");
  EXPECT_TRUE(waits_for(update, find_task(plan, "ep-hybrid-allreduce/shard1/stage0/experts0/bucket0")->id));
  EXPECT_FALSE(waits_for(update, find_task(plan, "ep-hybrid-allreduce/shard3/stage0/experts0/bucket0")->id));
  testing::expect_closed_form_gives_the_analytical_step(scenario);
}

// When a machine holds one replica of each expert (pipeline 2 x data 8 x expert 4 on two DGX A100s:
// the 4 replicas of a machine are a shard group, expert rank 0's holders are replicas 0 and 4),
// hybrid sharding keeps every expert whole and all-reduces its gradients over its 2 holders; the
// dense weights are still sharded over the machine's 4. With the layers split evenly, stage 0
// holds the embedding (Vh = 8,192) and h.0's dense 12,672 parameters, stage 1 h.1's, the final
// norm (64) and the head (8,192); each device one expert of 24,576: 16 x 20,864 / 4 + 16 x 24,576 =
// 476,672 bytes on stage 0 and 16 x 20,928 / 4 + 393,216 = 476,928 on stage 1.
TEST(ExpertParallel, HybridShardingKeepsAnExpertWholeWhereAMachineHoldsItOnce) {
  const std::string layout =
      R"({"pipeline": 2, "data": 8, "expert": 4, "micro_batches": 2, "stage_split": "layers", "fsdp": "hybrid", "bucket_bytes": 1e9})";
  const Scenario scenario = testing::scenario_from_text(mixtral_scenario(layout, 2));
  const ParallelismOptions& options = *scenario.strategies.front().parallelism;
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  for (int64_t d = 0; d < 8; ++d) {
    EXPECT_DOUBLE_EQ(plan.static_memory.at(options.device(d, 0, 0)).total(), 476672) << d;
    EXPECT_DOUBLE_EQ(plan.static_memory.at(options.device(d, 1, 0)).total(), 476928) << d;
  }
  for (const Task& task : plan.tasks) {
    EXPECT_EQ(task.name.find("zero3-allgather/h.0/expert_"), std::string::npos) << task.name;
    EXPECT_EQ(task.name.rfind("ep-zero3-reduce-scatter", 0), std::string::npos) << task.name;
  }
  const Task& reduced = *find_task(plan, "ep-dp-allreduce/stage0/experts0/bucket0");
  EXPECT_EQ(reduced.collective, CollectiveKind::kAllReduce);
  EXPECT_EQ(reduced.group, (std::vector<DeviceId>{options.device(0, 0, 0), options.device(4, 0, 0)}));
  EXPECT_DOUBLE_EQ(reduced.bytes, 2 * 24576);
  testing::expect_closed_form_gives_the_analytical_step(scenario);
}

// With tensor 2, each tensor rank dispatches its sequence-parallel half of the tokens: 32,768
// bytes per all-to-all; the expert groups are the replicas' same-rank devices.
TEST(ExpertParallel, TensorRanksEachRouteTheirShare) {
  const std::string layout = R"({"tensor": 2, "data": 2, "expert": 2, "sequence_parallel": true})";
  const ExecutionPlan plan = plan_of(layout);
  const auto exchanges = collectives(plan, CollectiveKind::kAllToAll);
  ASSERT_EQ(exchanges.size(), 16u);  // 2 layers x 4 exchanges x 2 tensor ranks, one group
  for (const Task* task : exchanges) {
    EXPECT_DOUBLE_EQ(task->bytes, 32768);
    const bool rank0 = task->group == std::vector<DeviceId>{gpu(layout, 0), gpu(layout, 2)};
    const bool rank1 = task->group == std::vector<DeviceId>{gpu(layout, 1), gpu(layout, 3)};
    EXPECT_TRUE(rank0 || rank1) << task->name;
  }
}

// The closed form (one replica's cells) gives the whole plan's analytical step, with a pipeline
// and two machines (the all-to-alls cross the network: data replicas are the outer index), and
// with ZeRO 3 in Megatron-Core's device order.
TEST(ExpertParallel, ClosedFormGivesTheWholePlansStep) {
  const Scenario scenario = testing::scenario_from_text(mixtral_scenario(
      R"({"tensor": 2, "pipeline": 2, "data": 4, "expert": 4, "micro_batches": 4, "stage_split": "layers"})", 2));
  testing::expect_closed_form_gives_the_analytical_step(scenario);
  testing::expect_closed_form_gives_the_analytical_step(testing::scenario_from_text(mixtral_scenario(
      R"({"pipeline": 2, "data": 8, "expert": 2, "zero": 3, "micro_batches": 2, "device_order": "tp-cp-dp-pp"})", 2)));
}

// Megatron-Core's order [TP, CP, DP, PP] (`"device_order": "tp-cp-dp-pp"`): with pipeline 2 x
// data 4 on 8 GPUs, replica d's stage s is GPU s x 4 + d, so the expert group of replicas 0 and 1
// at stage 1 is GPUs 4 and 5 (in the default order, GPUs 1 and 3).
TEST(ExpertParallel, MegatronOrderPutsNeighbouringReplicasTogether) {
  const std::string megatron = R"({"pipeline": 2, "data": 4, "expert": 2, "device_order": "tp-cp-dp-pp"})";
  const std::string llama = R"({"pipeline": 2, "data": 4, "expert": 2})";
  const ParallelismOptions p = *scenario_of(megatron).strategies.front().parallelism;
  EXPECT_EQ(p.device(1, 0, 0), p.devices[1]);
  EXPECT_EQ(p.device(2, 1, 0), p.devices[6]);
  EXPECT_EQ(p.device(3, 1, 0), p.devices[7]);
  const ParallelismOptions q = *scenario_of(llama).strategies.front().parallelism;
  EXPECT_EQ(q.device(1, 0, 0), q.devices[2]);
  EXPECT_EQ(q.device(2, 1, 0), q.devices[5]);
  auto stage1_groups = [](const ExecutionPlan& plan, DeviceId a, DeviceId b) {
    size_t found = 0;
    for (const Task* task : collectives(plan, CollectiveKind::kAllToAll)) found += task->group == std::vector<DeviceId>{a, b};
    return found;
  };
  EXPECT_EQ(stage1_groups(plan_of(megatron), p.devices[4], p.devices[5]), 4u);  // layer h.1's four exchanges
  EXPECT_EQ(stage1_groups(plan_of(llama), q.devices[1], q.devices[3]), 4u);
}

// Router imbalance f = 2 (dropless), on a wider model (h = 256, f = 1024, T = 128) whose expert
// GEMMs are large enough for work, not launch latency, to set their time: of k T = 256 rows
// routed per sample, expert 0 takes ceil(2 x 256 / 4) = 128 and the others ceil(128 / 3) = 43.
// Expert rank 0 of each group holds expert 0, so its experts run 2 x 8 x (128 + 43) = 2,736 rows
// to rank 1's 2 x 8 x (43 + 43) = 1,376; the all-to-alls make the whole group wait for it, and the
// closed form (which simulates rank 0) gives the whole plan's step, as it does balanced.
TEST(ExpertParallel, TheBusiestExpertsRankSetsTheStep) {
  const std::string model = R"({"zoo": "mixtral_8x7b", "parameters": {"layers": 2, "hidden": 256, "heads": 4,
      "kv_heads": 2, "ffn": 1024, "experts": 4, "top_k": 2, "sequence": 128, "vocabulary": 128, "router_imbalance": 2}})";
  auto text = [](const std::string& model_block) {
    return R"({"model": )" + model_block + R"(, "cluster": {"template": "dgx_a100", "nodes": 1},
      "strategy": {"parallelism": {"data": 4, "expert": 2}},
      "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 1}})";
  };
  const Scenario scenario = testing::scenario_from_text(text(model));
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  auto rows = [&](const std::string& name) {
    const Task& task = *find_task(plan, name);
    return task.kernel->with_samples(task.kernel_samples).gemm.m;
  };
  EXPECT_EQ(rows("r0/mb0/fwd/h.0/expert_0/mlp_fc") + rows("r0/mb0/fwd/h.0/expert_1/mlp_fc"), 2736);
  EXPECT_EQ(rows("r1/mb0/fwd/h.0/expert_2/mlp_fc") + rows("r1/mb0/fwd/h.0/expert_3/mlp_fc"), 1376);
  testing::expect_closed_form_gives_the_analytical_step(scenario);
  std::string balanced = model;
  balanced.replace(balanced.find(", \"router_imbalance\": 2"), 22, "");
  const Scenario even = testing::scenario_from_text(text(balanced));
  testing::expect_closed_form_gives_the_analytical_step(even);
  const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
  EXPECT_GT(estimate_step(plan, cluster).step_seconds, estimate_step(plan_scenario(even).plan, cluster).step_seconds);
}

void expect_refused(const std::string& text, const std::string& path, const std::string& words) {
  try {
    plan_scenario(testing::scenario_from_text(text));
    FAIL() << "accepted: " << text;
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), path);
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

TEST(ExpertParallel, RefusesWhatItCannotSplit) {
  expect_refused(mixtral_scenario(R"({"data": 4, "expert": 3})"), "/strategy/parallelism/expert",
                 "must divide the data-parallel size 4");
  expect_refused(mixtral_scenario(R"({"data": 8, "expert": 8})"), "/strategy/parallelism/expert",
                 "does not divide the 4 experts");
  // Three machines' shard groups of 8 replicas hold an expert group's 3 ranks 3, 3 and 2 times.
  const std::string six_experts = mixtral_scenario(R"({"data": 24, "expert": 3, "fsdp": "hybrid"})", 3);
  std::string text = six_experts;
  text.replace(text.find("\"experts\": 4"), 12, "\"experts\": 6");
  expect_refused(text, "/strategy/parallelism/expert", "hold the 3 ranks of an expert group unequally");
  expect_refused(testing::small_gpt_scenario(R"({"data": 2, "expert": 2})"), "/strategy/parallelism/expert",
                 "needs a mixture-of-experts model");
}

/// `layout` on `nodes` DGX A100s under SimGrid: the symmetric plan (one replica's tasks, the
/// others mirrored) gives the whole plan's step.
void expect_symmetric_simgrid_gives_the_whole_plans_step(const std::string& layout, int nodes) {
  const Scenario mirrored =
      testing::scenario_from_text(mixtral_scenario(layout, nodes, R"({"tier": "simulated", "symmetry": "representatives"})"));
  const Scenario whole =
      testing::scenario_from_text(mixtral_scenario(layout, nodes, R"({"tier": "simulated", "symmetry": "off"})"));
  const double full = evaluate_on_tier(whole, whole.strategies.front(), false).step_seconds;
  const TierStep symmetric = evaluate_on_tier(mirrored, mirrored.strategies.front(), false);
  ASSERT_TRUE(symmetric.planned);
  EXPECT_LT(symmetric.tasks, plan_scenario(whole).plan.tasks.size());  // one replica's tasks
  EXPECT_NEAR(symmetric.step_seconds, full, 1e-9 * full);
}

// Under SimGrid's symmetry the representative sends its all-to-all chunks to each peer and every
// other member's flows mirror them (each member i to member i + j of its group), as its expert
// gradients' ring mirrors the other expert ranks': inside one machine the mirrored step is the
// whole plan's.
TEST(ExpertParallel, SymmetricSimGridGivesTheWholePlansStep) {
  expect_symmetric_simgrid_gives_the_whole_plans_step(
      R"({"pipeline": 2, "data": 4, "expert": 4, "micro_batches": 2, "algorithm": "ring"})", 1);
}

// Hybrid sharding under SimGrid's symmetry: the representative's expert shard-group ring (GPUs 0,
// 2, 4, 6 of the first machine) is mirrored by every other expert shard group's, its ring across
// the machines ({0, 8}) by every other position's; the mirrored step is the whole plan's.
TEST(ExpertParallel, HybridShardingUnderSymmetricSimGridGivesTheWholePlansStep) {
  expect_symmetric_simgrid_gives_the_whole_plans_step(R"({"data": 16, "expert": 2, "fsdp": "hybrid", "algorithm": "ring"})", 2);
}

}  // namespace
}  // namespace expert_parallel_test
}  // namespace placesim
