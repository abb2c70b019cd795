// PipeDream's asynchronous pipeline (docs/pipeline-parallel.md#pipedream, `"schedule":
// "pipedream"`): the run's micro-batches in one 1F1B schedule without flushes, each stage updating
// its weights after every micro-batch's backward, weight stashing; and PipeDream-2BW
// (`"pipedream-2bw"`), the same schedule updating once per step. Expected counts and dependencies
// are derived by hand from the 1F1B schedule and the small GPT's shapes.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/spec/spec_error.h"
#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace asynchronous_pipeline_test {  // a unity batch holds several test files
namespace {

// The small GPT of testing::small_gpt_scenario (L = 2 layers: one per stage with whole layers),
// `steps` steps of 4 micro-batches.
Scenario scenario_of(const std::string& schedule, int steps, const std::string& extra = "",
                     const std::string& simulation = R"({"tier": "analytical"})") {
  return testing::scenario_from_text(testing::small_gpt_scenario_steps(
      R"({"pipeline": 2, "micro_batches": 4, "stage_split": "layers", "schedule": ")" + schedule + "\"" + extra + "}",
      steps, simulation));
}

const Task* find_task(const ExecutionPlan& plan, const std::string& name) {
  for (const Task& task : plan.tasks) {
    if (task.name == name) return &task;
  }
  return nullptr;
}

bool waits_for(const Task& task, const Task* other) {
  return other && std::find(task.deps.begin(), task.deps.end(), other->id) != task.deps.end();
}

/// Whether `task` waits for an update (reads weights an update wrote).
bool waits_for_an_update(const ExecutionPlan& plan, const Task& task) {
  return std::any_of(task.deps.begin(), task.deps.end(),
                     [&](TaskId dep) { return plan.tasks[dep].phase == Phase::kOptimizer; });
}

size_t optimizer_tasks(const ExecutionPlan& plan) {
  return static_cast<size_t>(std::count_if(plan.tasks.begin(), plan.tasks.end(),
                                           [](const Task& task) { return task.phase == Phase::kOptimizer; }));
}

size_t weighted_ops(const OpGraph& graph) {
  size_t count = 0;
  for (OpId v = 0; v < graph.size(); ++v) count += graph.op(v).parameter_count > 0;
  return count;
}

/// `schedule` over `steps` steps of the small GPT on the analytical tier: the run's makespan, and
/// the busiest stage device's compute time over the run.
std::pair<double, double> makespan_and_busiest(const std::string& schedule, int steps) {
  const Scenario scenario = scenario_of(schedule, steps);
  const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  const AnalyticalStepEstimate estimate = estimate_step(plan, cluster);
  double busiest = 0;
  for (DeviceId device : scenario.strategies.front().parallelism->devices) {
    double busy = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute && task.device == device) busy += estimate.timeline.tasks[task.id].duration();
    }
    busiest = std::max(busiest, busy);
  }
  return {estimate.makespan_seconds, busiest};
}

// Three steps of 4 micro-batches are one schedule of N = 12, and every op with weights is updated
// after each of them: 12 x W updates (W ops with weights), where the flushed 1F1B updates each once
// per step: 3 x W.
TEST(AsynchronousPipeline, EveryMicroBatchUpdatesItsStages) {
  const Scenario pipedream = scenario_of("pipedream", 3);
  const Scenario flushed = scenario_of("1f1b", 3);
  const size_t w = weighted_ops(pipedream.graph);
  ASSERT_GT(w, 0u);
  EXPECT_EQ(optimizer_tasks(plan_scenario(pipedream).plan), 12 * w);
  EXPECT_EQ(optimizer_tasks(plan_scenario(flushed).plan), 3 * w);
  EXPECT_NE(find_task(plan_scenario(pipedream).plan, "mb11/fwd/h.1/qkv"), nullptr);
}

// 1F1B with K = 2: stage 0 runs F0, F1, B0, F2, B1, F3, ...; stage 1 runs F0, B0, F1, B1, ...
// A forward reads the newest weights: stage 0's forward of micro-batch 2 waits for the update
// after micro-batch 0's backward (its staleness: 1 update, micro-batch 1's, lands between its
// forward and its own update), its forward of micro-batch 1 for no update; stage 1's forward of
// micro-batch 1 waits for micro-batch 0's update (staleness 0). A backward waits for no update:
// it reads the version its forward stashed.
TEST(AsynchronousPipeline, ForwardsReadTheNewestWeightsBackwardsTheirStash) {
  const ExecutionPlan plan = plan_scenario(scenario_of("pipedream", 1)).plan;
  const Task* update_h0_mb0 = find_task(plan, "opt/h.0/qkv/mb0");
  const Task* update_h1_mb0 = find_task(plan, "opt/h.1/qkv/mb0");
  ASSERT_NE(update_h0_mb0, nullptr);
  ASSERT_NE(update_h1_mb0, nullptr);
  EXPECT_TRUE(waits_for(*find_task(plan, "mb2/fwd/h.0/qkv"), update_h0_mb0));
  EXPECT_FALSE(waits_for(*find_task(plan, "mb1/fwd/h.0/qkv"), update_h0_mb0));
  EXPECT_TRUE(waits_for(*find_task(plan, "mb1/fwd/h.1/qkv"), update_h1_mb0));
  for (const Task& task : plan.tasks) {
    if (task.phase == Phase::kBackward) {
      EXPECT_FALSE(waits_for_an_update(plan, task)) << task.name;
    }
  }
}

// Weight stashing: stage s keeps min(K - s, N) versions: stage 0 two, stage 1 one. Its gradients
// and optimizer state are not stashed.
TEST(AsynchronousPipeline, EarlierStagesStashMoreWeightVersions) {
  const Scenario pipedream = scenario_of("pipedream", 1);
  const Scenario flushed = scenario_of("1f1b", 1);
  const ParallelismOptions& p = *pipedream.strategies.front().parallelism;
  const ExecutionPlan stashed = plan_scenario(pipedream).plan, plain = plan_scenario(flushed).plan;
  const StaticMemory first = stashed.static_memory.at(p.devices[0]), last = stashed.static_memory.at(p.devices[1]);
  ASSERT_GT(plain.static_memory.at(p.devices[0]).parameter_bytes, 0);
  EXPECT_DOUBLE_EQ(first.parameter_bytes, 2 * plain.static_memory.at(p.devices[0]).parameter_bytes);
  EXPECT_DOUBLE_EQ(last.parameter_bytes, plain.static_memory.at(p.devices[1]).parameter_bytes);
  EXPECT_DOUBLE_EQ(first.optimizer_state_bytes, plain.static_memory.at(p.devices[0]).optimizer_state_bytes);
}

// Without flushes the pipeline fills once per run: in steady state the busiest stage computes
// without idling, so two more steps (2 x 4 micro-batches) add 8 x its busy time per micro-batch
// (its forwards, backwards and updates: the device's busy time over the run / N), exactly.
TEST(AsynchronousPipeline, MoreStepsAddTheBusiestStagesPeriod) {
  auto run = [](int steps) {
    const auto [makespan, busiest] = makespan_and_busiest("pipedream", steps);
    return std::make_pair(makespan, busiest / (4.0 * steps));
  };
  const auto [two, period_two] = run(2);
  const auto [four, period_four] = run(4);
  EXPECT_NEAR(period_two, period_four, 1e-12 * period_two);
  EXPECT_NEAR(four - two, 8 * period_four, 1e-9 * four);
  // The flushed 1F1B pays its fill and drain every step.
  EXPECT_LT(four, makespan_and_busiest("1f1b", 4).first);
}

// What `run` reports per stage: staleness K - 1 - s and K - s weight versions (1 and 2 on stage
// 0, 0 and 1 on stage 1 of K = 2), the ideal bubble over the run's N = 3 x 4 micro-batches,
// (K - 1)/(N + K - 1) = 1/13, and the transfers between stages per step, the flushed 1F1B's
// (each micro-batch sends one activation forward and one gradient back whichever the schedule).
TEST(AsynchronousPipeline, RunReportsEachStagesStaleness) {
  const Scenario pipedream = scenario_of("pipedream", 3);
  const Scenario flushed = scenario_of("1f1b", 3);
  const EvaluatedStrategy async = evaluate_strategy(pipedream, pipedream.strategies.front(), false);
  const EvaluatedStrategy sync = evaluate_strategy(flushed, flushed.strategies.front(), false);
  ASSERT_TRUE(async.pipeline && sync.pipeline);
  ASSERT_EQ(async.pipeline->per_stage.size(), 2u);
  EXPECT_EQ(async.pipeline->per_stage[0].staleness, 1);
  EXPECT_EQ(async.pipeline->per_stage[0].weight_versions, 2);
  EXPECT_EQ(async.pipeline->per_stage[1].staleness, 0);
  EXPECT_EQ(async.pipeline->per_stage[1].weight_versions, 1);
  EXPECT_FALSE(sync.pipeline->per_stage[0].staleness.has_value());
  EXPECT_EQ(async.pipeline->micro_batches, 12);
  EXPECT_DOUBLE_EQ(async.pipeline->ideal_bubble_fraction, 1.0 / 13);
  ASSERT_TRUE(async.pipeline->traffic && sync.pipeline->traffic);
  EXPECT_EQ(async.pipeline->traffic->transfers, sync.pipeline->traffic->transfers);
  EXPECT_DOUBLE_EQ(async.pipeline->traffic->bytes, sync.pipeline->traffic->bytes);
}

// A 4-layer GPT on K = 4 stages (one layer each), `steps` steps of M = 4 micro-batches.
Scenario four_stages(const std::string& schedule, int steps) {
  std::string text = testing::small_parallel_scenario(
      R"({"zoo": "gpt", "parameters": {"layers": 4, "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128}})",
      R"({"pipeline": 4, "micro_batches": 4, "stage_split": "layers", "schedule": ")" + schedule + "\"}", 1,
      R"({"tier": "analytical"})");
  text.replace(text.find("\"steps\": 1"), 10, "\"steps\": " + std::to_string(steps));
  return testing::scenario_from_text(text);
}

// PipeDream-2BW: the same schedule without flushes, each stage's gradients accumulated over a
// step's M = 4 micro-batches and updated once per step: 3 steps are 3 x W updates (W ops with
// weights), as the flushed 1F1B's, where PipeDream's are 12 x W.
TEST(AsynchronousPipeline, DoubleBufferedUpdatesOncePerStep) {
  const Scenario double_buffered = scenario_of("pipedream-2bw", 3);
  const size_t w = weighted_ops(double_buffered.graph);
  const ExecutionPlan plan = plan_scenario(double_buffered).plan;
  EXPECT_EQ(optimizer_tasks(plan), 3 * w);
  EXPECT_NE(find_task(plan, "opt/h.0/qkv/step2"), nullptr);
  EXPECT_EQ(find_task(plan, "opt/h.0/qkv/mb3"), nullptr);
  EXPECT_NE(find_task(plan, "mb11/fwd/h.0/qkv"), nullptr);  // one schedule of the run's 12
}

// K = 2, M = 4: stage 0 runs F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 ..., its first update (step 0's)
// after B3: F4 ran before it (reads the initial weights, one version behind when its gradient
// joins step 1's update), F5 after it, waiting for it. Stage 1 runs F0 B0 ... B3 F4: its F4
// waits for stage 1's update. No forward of step 0 waits for an update; no backward for any.
TEST(AsynchronousPipeline, DoubleBufferedForwardsReadTheNewestWeights) {
  const ExecutionPlan plan = plan_scenario(scenario_of("pipedream-2bw", 2)).plan;
  const Task* update_h0 = find_task(plan, "opt/h.0/qkv/step0");
  const Task* update_h1 = find_task(plan, "opt/h.1/qkv/step0");
  ASSERT_NE(update_h0, nullptr);
  ASSERT_NE(update_h1, nullptr);
  EXPECT_TRUE(waits_for(*find_task(plan, "mb5/fwd/h.0/qkv"), update_h0));
  EXPECT_FALSE(waits_for(*find_task(plan, "mb4/fwd/h.0/qkv"), update_h0));
  EXPECT_TRUE(waits_for(*find_task(plan, "mb4/fwd/h.1/qkv"), update_h1));
  for (const Task& task : plan.tasks) {
    const bool step0_forward =
        task.phase == Phase::kForward && task.name.rfind("mb", 0) == 0 && std::stoi(task.name.substr(2)) < 4;
    if (step0_forward || task.phase == Phase::kBackward) {
      EXPECT_FALSE(waits_for_an_update(plan, task)) << task.name;
    }
  }
}

// Weight versions on K = 4 stages of one layer each: PipeDream stashes min(K - s, N) = 4, 3, 2,
// 1; PipeDream-2BW at most two, 2, 2, 2, 1 (staleness 1, 1, 1, 0), whatever the depth. The run
// reports them per stage.
TEST(AsynchronousPipeline, DoubleBufferingKeepsAtMostTwoVersions) {
  const Scenario pipedream = four_stages("pipedream", 2), double_buffered = four_stages("pipedream-2bw", 2),
                 flushed = four_stages("1f1b", 2);
  const ParallelismOptions& p = *pipedream.strategies.front().parallelism;
  const ExecutionPlan stashed = plan_scenario(pipedream).plan, doubled = plan_scenario(double_buffered).plan,
                      plain = plan_scenario(flushed).plan;
  const std::vector<double> pipedream_versions{4, 3, 2, 1}, double_buffered_versions{2, 2, 2, 1};
  for (size_t s = 0; s < 4; ++s) {
    const double weights = plain.static_memory.at(p.devices[s]).parameter_bytes;
    ASSERT_GT(weights, 0);
    EXPECT_DOUBLE_EQ(stashed.static_memory.at(p.devices[s]).parameter_bytes, pipedream_versions[s] * weights) << s;
    EXPECT_DOUBLE_EQ(doubled.static_memory.at(p.devices[s]).parameter_bytes, double_buffered_versions[s] * weights) << s;
  }
  const EvaluatedStrategy evaluated = evaluate_strategy(double_buffered, double_buffered.strategies.front(), false);
  ASSERT_TRUE(evaluated.pipeline);
  EXPECT_EQ(evaluated.pipeline->schedule, "pipedream-2bw");
  ASSERT_EQ(evaluated.pipeline->per_stage.size(), 4u);
  for (size_t s = 0; s < 4; ++s) {
    EXPECT_EQ(evaluated.pipeline->per_stage[s].weight_versions, double_buffered_versions[s]) << s;
    EXPECT_EQ(evaluated.pipeline->per_stage[s].staleness, s < 3 ? 1 : 0) << s;
  }
}

// Without flushes the pipeline fills once per run, as PipeDream's; the schedule repeats with a
// period of one step (M = 4 micro-batches and one update per stage), so from the second step on
// each step adds the same time, at least the busiest stage's busy time per step (its forwards,
// backwards and update: the device's busy time over the run / steps). Not exactly that: after a
// stage's update its next backward waits for the later stage's update, forward and backward. The
// run is shorter than PipeDream's (a quarter of its updates) and than the flushed 1F1B's (one fill
// and drain instead of four).
TEST(AsynchronousPipeline, DoubleBufferedStepsRepeatWithAPeriodOfOneStep) {
  const auto [two, busiest_two] = makespan_and_busiest("pipedream-2bw", 2);
  const double busy_per_step = busiest_two / 2;
  const double three = makespan_and_busiest("pipedream-2bw", 3).first, four = makespan_and_busiest("pipedream-2bw", 4).first;
  EXPECT_NEAR(four - three, three - two, 1e-9 * four);
  EXPECT_GE(four - three, busy_per_step * (1 - 1e-12));
  EXPECT_LT(four, makespan_and_busiest("pipedream", 4).first);
  EXPECT_LT(four, makespan_and_busiest("1f1b", 4).first);
}

void expect_refused(const Scenario& scenario, const std::string& words) {
  try {
    plan_scenario(scenario);
    FAIL() << "accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/strategy/parallelism/schedule");
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

TEST(AsynchronousPipeline, RefusesWhatItDoesNotModel) {
  expect_refused(scenario_of("pipedream", 1, R"(, "zero": 1)"), "no ZeRO");
  expect_refused(scenario_of("pipedream", 1, R"(, "tied_embeddings": true)"), "tied weights");
  expect_refused(scenario_of("pipedream", 1, R"(, "virtual_stages": 2)"), "does not interleave");
  // Two versions suffice only when a step's micro-batches cover the pipeline's depth.
  std::string shallow = testing::small_gpt_scenario(
      R"({"pipeline": 2, "micro_batches": 1, "stage_split": "layers", "schedule": "pipedream-2bw"})", 1,
      R"({"tier": "analytical"})");
  expect_refused(testing::scenario_from_text(shallow), "1 < 2");
  expect_refused(scenario_of("pipedream-2bw", 1, R"(, "zero": 1)"), "PipeDream-2BW's schedule");
  const Scenario closed = scenario_of("pipedream", 1, "", R"({"tier": "closed-form"})");
  try {
    estimate_3d_step_closed_form(closed.graph, closed.cluster, closed.run, *closed.strategies.front().parallelism);
    FAIL() << "the closed form took PipeDream";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.option(), "parallelism/schedule");
    EXPECT_NE(error.message().find("closed-form tier"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace asynchronous_pipeline_test
}  // namespace placesim
