// PipeDream's replicated stages (`"stage_replicas"`, docs/pipeline-parallel.md): each stage on
// its own number of replicas ("15-1"), the `data` streams of micro-batches round robin over
// them, each round's gradients all-reduced across a stage's replicas. Expected devices, orders,
// counts and versions are derived by hand from the widths and the 1F1B schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sim/analytical/analytical_engine.h"
#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "sim/spec/spec_error.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace replicated_stages_test {  // a unity batch holds several test files
namespace {

// The small GPT (2 layers: one per stage with whole layers) on one DGX A100, `steps` steps of 4
// micro-batches per stream; `parallelism_extra` goes into the parallelism block.
Scenario scenario_of(const std::string& parallelism_extra, int steps = 1, const std::string& schedule = "pipedream",
                     const std::string& simulation = R"({"tier": "analytical"})") {
  return testing::scenario_from_text(testing::small_gpt_scenario_steps(
      R"({"pipeline": 2, "micro_batches": 4, "stage_split": "layers", "schedule": ")" + schedule + "\"" +
          parallelism_extra + "}",
      steps, simulation));
}

const Task& task_named(const ExecutionPlan& plan, const std::string& name) {
  for (const Task& task : plan.tasks) {
    if (task.name == name) return task;
  }
  throw std::runtime_error("no task " + name);
}

bool waits_for(const Task& task, const Task& other) {
  return std::find(task.deps.begin(), task.deps.end(), other.id) != task.deps.end();
}

size_t updates_on(const ExecutionPlan& plan, DeviceId device) {
  return static_cast<size_t>(std::count_if(plan.tasks.begin(), plan.tasks.end(), [&](const Task& task) {
    return task.phase == Phase::kOptimizer && task.device == device;
  }));
}

/// Each of `devices` runs the forward of each of its ops once per micro-batch of every stream it
/// serves: streams_served[i] x `micro_batches` (per stream) times, and holds some op.
void expect_forwards_per_stream(const ExecutionPlan& plan, const std::vector<DeviceId>& devices,
                                const std::vector<int64_t>& streams_served, int64_t micro_batches) {
  ASSERT_EQ(devices.size(), streams_served.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    size_t forwards = 0;
    std::set<std::string> ops;
    for (const Task& task : plan.tasks) {
      if (task.kind != TaskKind::kCompute || task.phase != Phase::kForward || task.device != devices[i]) continue;
      ++forwards;
      ops.insert(task.op);
    }
    ASSERT_FALSE(ops.empty()) << "GPU " << i;
    EXPECT_EQ(forwards, static_cast<size_t>(streams_served[i] * micro_batches) * ops.size()) << "GPU " << i;
  }
}

// "2-1" on 3 GPUs: devices are read stage by stage, so stream d's stage 0 runs on GPU d and both
// streams' stage 1 on GPU 2.
TEST(ReplicatedStages, EachStreamRunsOnItsStagesReplicaRoundRobin) {
  const Scenario scenario = scenario_of(R"(, "stage_replicas": [2, 1])");
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  ASSERT_EQ(p.devices.size(), 3u);
  EXPECT_EQ(p.data, 2);
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  EXPECT_EQ(task_named(plan, "r0/mb0/fwd/h.0/qkv").device, p.devices[0]);
  EXPECT_EQ(task_named(plan, "r1/mb0/fwd/h.0/qkv").device, p.devices[1]);
  EXPECT_EQ(task_named(plan, "r0/mb0/fwd/h.1/qkv").device, p.devices[2]);
  EXPECT_EQ(task_named(plan, "r1/mb3/bwd/h.1/qkv").device, p.devices[2]);
}

// Stage 1's one replica runs the two streams in turn, one round (a micro-batch of each) after
// another, at 1F1B depth ceil(1 / 1) = 1: F(r0,0) B(r0,0) F(r1,0) B(r1,0) F(r0,1) ...; each
// forward reads the weights the previous stream's update wrote on that device. Stage 0's
// replicas keep ceil((2 + 1) / 2) = 2 micro-batches in flight: F0 F1 B0 F2 B1 ...
TEST(ReplicatedStages, ANarrowStageRunsItsStreamsInTurn) {
  const ExecutionPlan plan = plan_scenario(scenario_of(R"(, "stage_replicas": [2, 1])")).plan;
  const Task& second_stream = task_named(plan, "r1/mb0/fwd/h.1/qkv");
  EXPECT_TRUE(waits_for(second_stream, task_named(plan, "r0/mb0/bwd-done/stage1")));
  EXPECT_TRUE(waits_for(second_stream, task_named(plan, "r0/opt/h.1/qkv/mb0/round0")));
  EXPECT_TRUE(waits_for(task_named(plan, "r0/mb1/fwd/h.1/qkv"), task_named(plan, "r1/mb0/bwd-done/stage1")));
  EXPECT_TRUE(waits_for(task_named(plan, "r0/mb1/fwd/h.0/qkv"), task_named(plan, "r0/mb0/fwd-done/stage0")));
  EXPECT_TRUE(waits_for(task_named(plan, "r0/mb0/bwd/h.0/qkv"), task_named(plan, "r0/mb1/fwd-done/stage0")));
}

// Stage 0's two replicas all-reduce each round's gradients between them, then each updates: N
// updates of its W0 weighted ops per replica. Stage 1's one replica reduces nothing and updates
// after every stream's micro-batch: 2N x W1. N = 4 micro-batches per stream.
TEST(ReplicatedStages, AStagesReplicasReduceEachRoundTogether) {
  const Scenario scenario = scenario_of(R"(, "stage_replicas": [2, 1])");
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  size_t w0 = 0, w1 = 0;
  for (OpId v = 0; v < scenario.graph.size(); ++v) {
    if (scenario.graph.op(v).parameter_count <= 0) continue;
    (task_named(plan, "r0/mb0/fwd/" + scenario.graph.op(v).name).device == p.devices[0] ? w0 : w1) += 1;
  }
  ASSERT_GT(w0, 0u);
  ASSERT_GT(w1, 0u);
  EXPECT_EQ(updates_on(plan, p.devices[0]), 4 * w0);
  EXPECT_EQ(updates_on(plan, p.devices[1]), 4 * w0);
  EXPECT_EQ(updates_on(plan, p.devices[2]), 2 * 4 * w1);
  size_t stage0_reductions = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective) continue;
    EXPECT_EQ(task.name.rfind("dp-allreduce/stage0/", 0), 0u) << task.name;
    EXPECT_EQ(task.group, (std::vector<DeviceId>{p.devices[0], p.devices[1]})) << task.name;
    stage0_reductions += task.name.find("/mb2") != std::string::npos;
  }
  EXPECT_GE(stage0_reductions, 1u);
}

// Versions a stage replica stashes: ceil((w_s + ... + w_{K-1}) / w_s), at most the data / w_s x M
// micro-batches it runs. 15-1: 2, 1; 1-2 (M = 4): 3, 1, and with M = 1 stage 0 runs only 2; 4-2-1:
// 2, 2, 1; equal widths: K - s.
TEST(ReplicatedStages, EachStageStashesWhatItsDepthKeepsInFlight) {
  EXPECT_EQ(pipedream_replicated_weight_versions({15, 1}, 0, 4), 2);
  EXPECT_EQ(pipedream_replicated_weight_versions({15, 1}, 1, 4), 1);
  EXPECT_EQ(pipedream_replicated_weight_versions({1, 2}, 0, 4), 3);
  EXPECT_EQ(pipedream_replicated_weight_versions({1, 2}, 0, 1), 2);
  EXPECT_EQ(pipedream_replicated_weight_versions({1, 2}, 1, 4), 1);
  EXPECT_EQ(pipedream_replicated_weight_versions({4, 2, 1}, 1, 4), 2);
  EXPECT_EQ(pipedream_replicated_weight_versions({4, 2, 1}, 2, 4), 1);
  EXPECT_EQ(pipedream_replicated_weight_versions({3, 3, 3, 3}, 0, 8), 4);
  // In memory: 2-1's stage 0 replicas hold 2 versions of their weights, its stage 1 replica one
  // copy (not one per stream it serves); the same stages' weights as the flushed single pipeline's.
  const Scenario replicated = scenario_of(R"(, "stage_replicas": [2, 1])");
  const Scenario single = scenario_of("", 1, "1f1b");
  const ParallelismOptions& p = *replicated.strategies.front().parallelism;
  const ParallelismOptions& q = *single.strategies.front().parallelism;
  const ExecutionPlan stashed = plan_scenario(replicated).plan, plain = plan_scenario(single).plan;
  const double stage0 = plain.static_memory.at(q.devices[0]).parameter_bytes,
               stage1 = plain.static_memory.at(q.devices[1]).parameter_bytes;
  ASSERT_GT(stage0, 0);
  EXPECT_DOUBLE_EQ(stashed.static_memory.at(p.devices[0]).parameter_bytes, 2 * stage0);
  EXPECT_DOUBLE_EQ(stashed.static_memory.at(p.devices[1]).parameter_bytes, 2 * stage0);
  EXPECT_DOUBLE_EQ(stashed.static_memory.at(p.devices[2]).parameter_bytes, stage1);
  EXPECT_DOUBLE_EQ(stashed.static_memory.at(p.devices[2]).optimizer_state_bytes,
                   plain.static_memory.at(q.devices[1]).optimizer_state_bytes);
  const EvaluatedStrategy evaluated = evaluate_strategy(replicated, replicated.strategies.front(), false);
  ASSERT_TRUE(evaluated.pipeline);
  EXPECT_EQ(evaluated.pipeline->per_stage[0].weight_versions, 2);
  EXPECT_EQ(evaluated.pipeline->per_stage[1].staleness, 0);
  EXPECT_EQ(evaluated.pipeline->per_stage[0].replicas, 2);
  EXPECT_EQ(evaluated.pipeline->per_stage[1].replicas, 1);
}

// Equal widths are PipeDream's plain schedule with the same device order (stages outermost):
// the same step, tasks and memory on the analytical tier.
TEST(ReplicatedStages, EqualWidthsAreThePlainScheduleWithStagesOutermost) {
  const Scenario widths = scenario_of(R"(, "stage_replicas": [2, 2])", 2);
  const Scenario plain = scenario_of(R"(, "data": 2, "device_order": "tp-cp-dp-pp")", 2);
  ASSERT_EQ(widths.strategies.front().parallelism->devices, plain.strategies.front().parallelism->devices);
  const ExecutionPlan a = plan_scenario(widths).plan, b = plan_scenario(plain).plan;
  EXPECT_EQ(a.tasks.size(), b.tasks.size());
  const AnalyticalStepEstimate x = estimate_step(a, widths.cluster), y = estimate_step(b, plain.cluster);
  EXPECT_DOUBLE_EQ(x.makespan_seconds, y.makespan_seconds);
  for (DeviceId device : widths.strategies.front().parallelism->devices) {
    EXPECT_DOUBLE_EQ(a.static_memory.at(device).parameter_bytes, b.static_memory.at(device).parameter_bytes);
  }
}

// In steady state 2-1's one stage-1 replica is the bottleneck (twice the micro-batches of a
// stage-0 replica, the larger layer with the head) and never idles: two more steps add exactly
// its busy time for them.
TEST(ReplicatedStages, TheNarrowStageSetsThePace) {
  auto run = [](int steps) {
    const Scenario scenario = scenario_of(R"(, "stage_replicas": [2, 1])", steps);
    const DeviceId narrow = scenario.strategies.front().parallelism->devices[2];
    const ExecutionPlan plan = plan_scenario(scenario).plan;
    const AnalyticalStepEstimate estimate = estimate_step(plan, scenario.cluster);
    double busy = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute && task.device == narrow) busy += estimate.timeline.tasks[task.id].duration();
    }
    return std::make_pair(estimate.makespan_seconds, busy);
  };
  const auto [two, busy_two] = run(2);
  const auto [four, busy_four] = run(4);
  EXPECT_NEAR(four - two, busy_four - busy_two, 1e-9 * four);
}

// 4-2-1 on 7 GPUs over 2 steps (N = 8 micro-batches per stream): every stage replica runs data /
// w_s = 1, 2 and 4 streams' forwards of each of its ops, N each, and the merged emission leaves
// no slot behind (it throws if a stage waits for a slot no stage emits).
TEST(ReplicatedStages, EachReplicaRunsItsShareOfTheStreams) {
  const Scenario scenario = testing::scenario_from_text(testing::small_gpt_scenario_steps(
      R"({"pipeline": 3, "micro_batches": 4, "schedule": "pipedream", "stage_replicas": [4, 2, 1]})", 2,
      R"({"tier": "analytical"})"));
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  ASSERT_EQ(p.devices.size(), 7u);
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  const std::vector<int64_t> streams_served{1, 1, 1, 1, 2, 2, 4};  // stages 0, 0, 0, 0, 1, 1, 2
  expect_forwards_per_stream(plan, p.devices, streams_served, 8);
}

// A wide stage after a narrow one: 2-6-2 (6 streams, 4 micro-batches each). Stage 1 (depth
// ceil(8 / 6) = 2) runs F(m0) F(m1) B(m0): before its first backward it needs micro-batches 0
// and 1 of all 6 streams, 12 units, i.e. 6 rounds of stage 0's 2 replicas; stage 0's NOAM,
// ceil(10 / 2) = 5, would put its first backward (which waits for stage 1's) after 5 forward
// rounds, and the schedule would wait forever. So stage 0 keeps 6 rounds in flight (6 versions);
// stage 2 (width 2, last) 1; stage 1 2. It plans, each replica running its share of the streams.
TEST(ReplicatedStages, AWideStageAfterANarrowOneGetsTheDepthItsWarmUpNeeds) {
  EXPECT_EQ(pipedream_replicated_weight_versions({2, 6, 2}, 0, 4), 6);
  EXPECT_EQ(pipedream_replicated_weight_versions({2, 6, 2}, 1, 4), 2);
  EXPECT_EQ(pipedream_replicated_weight_versions({2, 6, 2}, 2, 4), 1);
  const Scenario scenario = testing::scenario_from_text(testing::small_gpt_scenario(
      R"({"pipeline": 3, "micro_batches": 4, "schedule": "pipedream", "stage_replicas": [2, 6, 2]})", 2,
      R"({"tier": "analytical"})"));
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  ASSERT_EQ(p.devices.size(), 10u);
  const ExecutionPlan plan = plan_scenario(scenario).plan;  // threw "waits for a slot no stage emits" before
  const std::vector<int64_t> streams_served{3, 3, 1, 1, 1, 1, 1, 1, 3, 3};
  expect_forwards_per_stream(plan, p.devices, streams_served, 4);
}

// "2-1" is no set of copies of one pipeline: its scaling baseline is the whole model on one GPU,
// the same micro-batches one after another, and its 3 GPUs are 3 copies of that: efficiency =
// throughput / (3 x the one GPU's).
TEST(ReplicatedStages, ScaleAgainstTheWholeModelOnOneTensorGroup) {
  const Scenario replicated = scenario_of(R"(, "stage_replicas": [2, 1])", 2);
  const EvaluatedStrategy evaluated = evaluate_strategy(replicated, replicated.strategies.front(), true);
  const Scenario one_gpu = testing::scenario_from_text(
      testing::small_gpt_scenario_steps(R"({"pipeline": 1, "micro_batches": 4})", 2, R"({"tier": "analytical"})"));
  const double alone = evaluate_strategy(one_gpu, one_gpu.strategies.front(), false).result.samples_per_second();
  ASSERT_TRUE(evaluated.result.single_replica_samples_per_second);
  EXPECT_DOUBLE_EQ(*evaluated.result.single_replica_samples_per_second, alone);
  ASSERT_TRUE(evaluated.result.scaling_efficiency());
  EXPECT_DOUBLE_EQ(*evaluated.result.scaling_efficiency(), evaluated.result.samples_per_second() / (3 * alone));
}

void expect_refused(const std::string& parallelism_extra, const std::string& path, const std::string& words,
                    const std::string& schedule = "pipedream") {
  const testing::Refusal refusal = testing::refusal_of([&] { plan_scenario(scenario_of(parallelism_extra, 1, schedule)); });
  ASSERT_TRUE(refusal.refused) << "accepted " << parallelism_extra;
  EXPECT_EQ(refusal.json_path, path) << refusal.message;
  EXPECT_NE(refusal.message.find(words), std::string::npos) << "[" << words << "] in " << refusal.message;
}

TEST(ReplicatedStages, RefusesWidthsItCannotRun) {
  const std::string at = "/strategy/parallelism/";
  expect_refused(R"(, "stage_replicas": [2, 1])", at + "stage_replicas", "PipeDream's", "1f1b");
  expect_refused(R"(, "stage_replicas": [2, 1])", at + "stage_replicas", "PipeDream-2BW", "pipedream-2bw");
  expect_refused(R"(, "stage_replicas": [2, 1, 1])", at + "stage_replicas", "3 widths for \"pipeline\" 2: one per stage");
  expect_refused(R"(, "stage_replicas": [3, 2])", at + "stage_replicas/1", "do not divide the widest stage's 3");
  expect_refused(R"(, "stage_replicas": [0, 1])", at + "stage_replicas/0", "");
  expect_refused(R"(, "stage_replicas": [2, 1], "data": 4)", at + "data", "the widest stage's 2");
  expect_refused(R"(, "stage_replicas": [2, 1], "device_order": "tp-cp-dp-pp")", at + "device_order", "stage by stage");
  expect_refused(R"(, "stage_replicas": [8, 1])", "/strategy/parallelism", "stage replicas 8 + 1 x tensor 1 = 9 devices, but the cluster has 8 GPUs");
  const testing::Refusal representatives = testing::refusal_of([] {
    plan_scenario(scenario_of(R"(, "stage_replicas": [2, 1])", 1, "pipedream", R"({"symmetry": "representatives"})"));
  });
  EXPECT_TRUE(representatives.refused);
  EXPECT_EQ(representatives.json_path, at + "stage_replicas");
}

}  // namespace
}  // namespace replicated_stages_test
}  // namespace placesim
