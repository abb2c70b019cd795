// PipeDream's replicated stages replayed (docs/convergence.md#pipelines): each stage updates its own
// layers once per round of its replicas' streams, each gradient reading every stage at the version
// its forward there read. The order, versions and times are derived by hand from the widths; the
// replay is checked against the problem's own gradients on hand-built composites, and equal widths
// against the plain PipeDream replay to the last bit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/convergence/convergence_study.h"
#include "sim/convergence/dataset.h"
#include "sim/convergence/replay.h"
#include "sim/convergence/update_schedule.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/pipeline.h"
#include "tests/support/replay_options.h"

namespace placesim {
namespace replicated_stages_convergence_test {  // a unity batch holds several test files
namespace {

/// Replicated stages of `widths` with each stage's simulated update ends.
SimulatedTimings replicated_timings(std::vector<int64_t> widths, std::vector<std::vector<double>> ends,
                                    int64_t micro_batches) {
  SimulatedTimings timings;
  timings.asynchronous = true;
  timings.workers = *std::max_element(widths.begin(), widths.end());
  timings.simulated_steps = 1;
  PipelineTimings pipeline;
  pipeline.stages = static_cast<int64_t>(widths.size());
  pipeline.replicas = timings.workers;
  pipeline.micro_batches = micro_batches;
  pipeline.updates_per_step = micro_batches;
  pipeline.stage_replicas = std::move(widths);
  pipeline.stage_update_end_seconds = std::move(ends);
  timings.pipeline = pipeline;
  return timings;
}

using testing::recorded_replay_options;

// Widths 2-1 (2 streams), staleness 1 and 0, one simulated step of one micro-batch per stream:
// stage 0 updated at 3 s, stage 1 at 1 and 2 s. Four gradients (g = stream + 2 x micro-batch):
// after g0 stage 1's update 0; after g1 stage 1's update 1, then stage 0's update 0 (g0, g1);
// after g2 and g3 the same again. A gradient reads stage 0 at floor(g / 2) - 1 (at least 0) and
// stage 1 at g. Past the simulated updates: stage 1 at its last spacing (1 s: 3, 4 s), stage 0,
// with one simulated update, a whole step later (6 s).
TEST(ReplicatedStagesConvergence, EachStageUpdatesOncePerRoundReadingTheVersionsItsForwardsRead) {
  const UpdateTrace trace = schedule_replicated_stages(replicated_timings({2, 1}, {{3.0}, {1.0, 2.0}}, 1), {0, 1},
                                                       {1, 0}, 4);
  struct Expected {
    int64_t stage, stage_update;
    double seconds;
    std::vector<GradientSource> gradients;
    std::vector<std::vector<int64_t>> versions;
  };
  const std::vector<Expected> expected{
      {1, 0, 1.0, {{0, 0}}, {{0, 0}}},
      {1, 1, 2.0, {{1, 0}}, {{0, 1}}},
      {0, 0, 3.0, {{0, 0}, {1, 0}}, {{0, 0}, {0, 1}}},
      {1, 2, 3.0, {{0, 1}}, {{0, 2}}},
      {1, 3, 4.0, {{1, 1}}, {{0, 3}}},
      {0, 1, 6.0, {{0, 1}, {1, 1}}, {{0, 2}, {0, 3}}},
  };
  EXPECT_EQ(trace.layer_stage, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(trace.updates.size(), expected.size());
  for (size_t u = 0; u < expected.size(); ++u) {
    const TracedUpdate& update = trace.updates[u];
    EXPECT_EQ(update.stage, expected[u].stage) << u;
    EXPECT_EQ(update.stage_update, expected[u].stage_update) << u;
    EXPECT_DOUBLE_EQ(update.apply_seconds, expected[u].seconds) << u;
    ASSERT_EQ(update.gradients.size(), expected[u].gradients.size()) << u;
    for (size_t g = 0; g < update.gradients.size(); ++g) {
      EXPECT_EQ(update.gradients[g].worker, expected[u].gradients[g].worker) << u;
      EXPECT_EQ(update.gradients[g].iteration, expected[u].gradients[g].iteration) << u;
    }
    EXPECT_EQ(update.stage_versions, expected[u].versions) << u;
  }
  // Stage 0's second update: its own layers read at version 0, one update back.
  EXPECT_EQ(trace.updates[5].version_read, 0);
}

// Replayed: stage 1's updates change the output layer only, stage 0's the hidden layer only;
// stage 0's first update is the sum of two gradients computed by hand, g0 on the initial weights
// and g1 on the initial hidden layer with the output layer after stage 1's first update.
TEST(ReplicatedStagesConvergence, EachUpdateIsItsGradientsOnTheirOwnVersionsAppliedToItsStage) {
  const auto model = make_training_problem(ProblemKind::kMlp, 8, 8);
  const GeneratedData data = generate_data({512, 256, 8, 0.05, 7});
  const std::vector<size_t> starts = model->layer_starts();
  ASSERT_EQ(starts.size(), 2u);
  const size_t hidden = starts[1];  // the hidden layer's weights and biases come first
  const UpdateTrace trace = schedule_replicated_stages(replicated_timings({2, 1}, {{3.0}, {1.0, 2.0}}, 1), {0, 1},
                                                       {1, 0}, 4);
  const ReplayResult result = replay(trace, *model, data.training, data.evaluation, recorded_replay_options());
  ASSERT_EQ(result.parameters.size(), 6u);
  const std::vector<double> initial = model->initial_parameters(7);
  for (size_t u = 0; u < 6; ++u) {
    const std::vector<double>& before = u == 0 ? initial : result.parameters[u - 1];
    const std::vector<double>& after = result.parameters[u];
    const bool hidden_stage = trace.updates[u].stage == 0;
    for (size_t i = 0; i < after.size(); ++i) {
      if ((i < hidden) != hidden_stage) {
        EXPECT_EQ(after[i], before[i]) << "update " << u << ", parameter " << i;
      }
    }
    EXPECT_NE(after, before) << u;
  }
  std::vector<double> second_read = initial;  // g1: the output layer after stage 1's update 0
  std::copy(result.parameters[0].begin() + static_cast<std::ptrdiff_t>(hidden), result.parameters[0].end(),
            second_read.begin() + static_cast<std::ptrdiff_t>(hidden));
  std::vector<double> gradient(model->parameter_count(), 0.0);
  model->add_gradient(initial, data.training, minibatch_rows(7, 0, 0, 8, data.training.samples()), 1.0, &gradient);
  model->add_gradient(second_read, data.training, minibatch_rows(7, 1, 0, 8, data.training.samples()), 1.0, &gradient);
  for (size_t i = 0; i < hidden; ++i) {
    EXPECT_NEAR(result.parameters[2][i], initial[i] - 0.3 * gradient[i], 1e-12) << i;
  }
  EXPECT_DOUBLE_EQ(result.staleness[5], 1);  // stage 0's second update
  EXPECT_DOUBLE_EQ(result.staleness[4], 0);  // stage 1's fourth
}

// Equal widths (2-2) are PipeDream's plain schedule: the same gradients on the same versions, so
// the per-stage replay ends on the plain replay's parameters, bit for bit.
TEST(ReplicatedStagesConvergence, EqualWidthsReplayAsThePlainSchedule) {
  const auto model = make_training_problem(ProblemKind::kMlp, 8, 8);
  const GeneratedData data = generate_data({512, 256, 8, 0.05, 7});
  const std::vector<double> ends{1.0, 2.0, 3.0, 4.0};
  const UpdateTrace staged = schedule_replicated_stages(replicated_timings({2, 2}, {ends, ends}, 4), {0, 1}, {1, 0}, 8);
  SimulatedTimings plain_timings = replicated_timings({2, 2}, {}, 4);
  plain_timings.pipeline->stage_replicas.clear();
  plain_timings.pipeline->update_end_seconds = ends;
  const UpdateTrace plain = schedule_pipeline(plain_timings, {1, 0}, 8);
  ASSERT_EQ(plain.updates.size(), 4u);
  ASSERT_EQ(staged.updates.size(), 8u);  // each round: stage 1's update, then stage 0's
  ReplayOptions options = recorded_replay_options();
  options.record_parameters = false;
  const ReplayResult a = replay(staged, *model, data.training, data.evaluation, options);
  const ReplayResult b = replay(plain, *model, data.training, data.evaluation, options);
  EXPECT_EQ(a.final_parameters, b.final_parameters);
  EXPECT_DOUBLE_EQ(a.curve.back().seconds, b.curve.back().seconds);
  EXPECT_EQ(a.curve.back().applied_gradients, b.curve.back().applied_gradients);
}

// A trace whose gradient reads a stage version not yet written is refused.
TEST(ReplicatedStagesConvergence, AReadOfAnUnwrittenVersionIsRefused) {
  const auto model = make_training_problem(ProblemKind::kMlp, 8, 8);
  const GeneratedData data = generate_data({512, 256, 8, 0.05, 7});
  UpdateTrace trace = schedule_replicated_stages(replicated_timings({2, 1}, {{3.0}, {1.0, 2.0}}, 1), {0, 1}, {1, 0}, 2);
  trace.updates[0].stage_versions[0][0] = 1;  // stage 0 has no update yet
  EXPECT_THROW(replay(trace, *model, data.training, data.evaluation, recorded_replay_options()), std::invalid_argument);
}

// From a simulated plan (small GPT, stages 2-1, 2 steps of 2 micro-batches per stream): stage 0
// updates 2 / 2 x 2 = 2 times a step, stage 1 2 / 1 x 2 = 4 times, in increasing order, the last at
// the run's end; the study replays them with the hidden layer on stage 0 (staleness 1) and the
// output layer on stage 1 (0), each gradient a micro-batch's half of the worker rows.
TEST(ReplicatedStagesConvergence, TimingsComeFromTheSimulatedPlan) {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "placesim_replicated_convergence.json";
  std::ofstream(file) << R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128}},
    "cluster": {"template": "dgx_a100"},
    "strategy": {"parallelism": {"pipeline": 2, "stage_replicas": [2, 1], "micro_batches": 2,
                                 "stage_split": "layers", "schedule": "pipedream"}},
    "simulation": {"tier": "analytical"},
    "run": {"batch_size": 8, "steps": 2, "precision": "fp16", "optimizer": "adam"},
    "convergence": {"problem": "mlp", "max_gradients": 40, "batch_per_worker": 16, "target_loss": 0.3}
  })";
  const Scenario scenario =
      load_scenario(file, HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"));
  std::filesystem::remove(file);
  const EvaluatedStrategy evaluated = evaluate_strategy(scenario, scenario.strategies.front(), false);
  const SimulatedTimings timings =
      extract_replicated_stage_timings(evaluated.planned.plan, evaluated.run.timeline, *scenario.strategies.front().parallelism);
  ASSERT_TRUE(timings.pipeline);
  EXPECT_EQ(timings.workers, 2);
  const auto& ends = timings.pipeline->stage_update_end_seconds;
  ASSERT_EQ(ends.size(), 2u);
  ASSERT_EQ(ends[0].size(), 4u);
  ASSERT_EQ(ends[1].size(), 8u);
  for (const auto& stage : ends) {
    for (size_t k = 1; k < stage.size(); ++k) EXPECT_GT(stage[k], stage[k - 1]);
  }
  EXPECT_DOUBLE_EQ(std::max(ends[0].back(), ends[1].back()), evaluated.run.metrics.makespan_seconds);

  const ConvergenceStudy study = run_convergence_study({{"2-1", timings}}, *scenario.convergence);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_EQ(study.runs.front().rows_per_gradient, 8);
  EXPECT_DOUBLE_EQ(study.runs.front().max_staleness, 1);
  ASSERT_EQ(study.notes.size(), 2u);
  EXPECT_NE(study.notes[0].find("replicated stages 2-1: layer 0 on stage 0 (2 replicas, staleness 1), layer 1 on "
                                "stage 1 (1 replica, staleness 0)"),
            std::string::npos)
      << study.notes[0];
  EXPECT_NE(study.notes[1].find("8 rows (16 per worker step / 2 micro-batches) at learning rate 0.05"), std::string::npos)
      << study.notes[1];
}

}  // namespace
}  // namespace replicated_stages_convergence_test
}  // namespace placesim
