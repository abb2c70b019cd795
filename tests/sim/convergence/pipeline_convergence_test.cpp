// PipeDream's staleness replayed (docs/convergence.md#pipelines): each layer of the problem reads
// the weight version its stage stashed, the update order comes from the simulated pipeline, and a
// flushed pipeline is one synchronous update per step. Checked against the problem's own gradient
// computed by hand on the composite parameters, and against the simulated timeline.
#include <gtest/gtest.h>

#include <algorithm>
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
namespace pipeline_convergence_test {  // a unity batch holds several test files
namespace {

using testing::recorded_replay_options;

/// One gradient per update, worker 0's iteration u, read at version u - staleness (clamped).
UpdateTrace one_worker_trace(int64_t updates, std::vector<int64_t> layer_staleness) {
  UpdateTrace trace;
  trace.workers = 1;
  trace.asynchronous = true;
  trace.layer_staleness = std::move(layer_staleness);
  int64_t oldest = 0;
  for (int64_t s : trace.layer_staleness) oldest = std::max(oldest, s);
  for (int64_t u = 0; u < updates; ++u) {
    TracedUpdate update;
    update.apply_seconds = static_cast<double>(u + 1);
    update.version_read = std::max<int64_t>(0, u - oldest);
    update.gradients = {{0, u}};
    trace.updates.push_back(update);
  }
  return trace;
}

// Update 2 of a trace whose input layer is 1 update stale and output layer fresh reads the hidden
// layer after update 0 and the output layer after update 1: its step is the MLP's gradient on
// that composite, by hand; with no layer stale it is sequential SGD.
TEST(PipelineConvergence, EachLayerReadsTheVersionItsStageStashed) {
  const auto model = make_training_problem(ProblemKind::kMlp, 8, 8);
  const GeneratedData data = generate_data({512, 256, 8, 0.05, 7});
  const std::vector<size_t> starts = model->layer_starts();
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(starts[1], 8u * 8u + 8u);  // hidden weights and biases
  const ReplayResult stale = replay(one_worker_trace(3, {1, 0}), *model, data.training, data.evaluation, recorded_replay_options());
  std::vector<double> composite = stale.parameters[1];  // after update 1: the output layer's version
  std::copy(stale.parameters[0].begin(), stale.parameters[0].begin() + static_cast<std::ptrdiff_t>(starts[1]),
            composite.begin());  // the hidden layer after update 0
  std::vector<double> gradient(model->parameter_count(), 0.0);
  model->add_gradient(composite, data.training, minibatch_rows(7, 0, 2, 8, data.training.samples()), 1.0, &gradient);
  for (size_t i = 0; i < gradient.size(); ++i) {
    EXPECT_NEAR(stale.parameters[2][i], stale.parameters[1][i] - 0.3 * gradient[i], 1e-12) << i;
  }
  UpdateTrace plain = one_worker_trace(3, {});
  const ReplayResult fresh = replay(one_worker_trace(3, {0, 0}), *model, data.training, data.evaluation, recorded_replay_options());
  const ReplayResult sequential = replay(plain, *model, data.training, data.evaluation, recorded_replay_options());
  EXPECT_EQ(fresh.final_parameters, sequential.final_parameters);
  EXPECT_NE(stale.final_parameters, sequential.final_parameters);
}

/// A simulated pipeline: `updates` ends, 1 s apart, then the last step's spacing.
SimulatedTimings pipeline_timings(bool asynchronous, int64_t updates, int64_t micro_batches, int64_t replicas) {
  SimulatedTimings timings;
  timings.asynchronous = asynchronous;
  timings.workers = asynchronous ? replicas : replicas * micro_batches;
  timings.simulated_steps = asynchronous ? updates / micro_batches : updates;
  PipelineTimings pipeline;
  pipeline.stages = 4;
  pipeline.replicas = replicas;
  pipeline.micro_batches = micro_batches;
  pipeline.updates_per_step = asynchronous ? micro_batches : 1;
  for (int64_t u = 0; u < updates; ++u) pipeline.update_end_seconds.push_back(2.0 + static_cast<double>(u));
  timings.pipeline = pipeline;
  return timings;
}

// PipeDream, 2 replicas, 8 simulated updates (2 steps of 4): 20 gradients are 10 updates of 2;
// the first 8 at the simulated ends (2..9 s), then 1 s apart (the last step's spacing); each reads
// its oldest layer 3 updates back. Flushed, 2 replicas x 4 micro-batches: 3 updates of 8 gradients,
// the 2 simulated steps' ends (2, 3 s) repeating (3 + 2 = 5 s).
TEST(PipelineConvergence, SchedulesFollowTheSimulatedUpdates) {
  const UpdateTrace pipedream = schedule_pipeline(pipeline_timings(true, 8, 4, 2), {3, 0}, 20);
  ASSERT_EQ(pipedream.updates.size(), 10u);
  for (size_t u = 0; u < 10; ++u) {
    EXPECT_DOUBLE_EQ(pipedream.updates[u].apply_seconds, 2.0 + static_cast<double>(u));
    EXPECT_EQ(pipedream.updates[u].version_read, std::max<int64_t>(0, static_cast<int64_t>(u) - 3));
    ASSERT_EQ(pipedream.updates[u].gradients.size(), 2u);
    EXPECT_EQ(pipedream.updates[u].gradients[1].worker, 1);
    EXPECT_EQ(pipedream.updates[u].gradients[1].iteration, static_cast<int64_t>(u));
  }
  EXPECT_EQ(pipedream.layer_staleness, (std::vector<int64_t>{3, 0}));
  const UpdateTrace flushed = schedule_pipeline(pipeline_timings(false, 2, 4, 2), {}, 20);
  ASSERT_EQ(flushed.updates.size(), 3u);
  EXPECT_DOUBLE_EQ(flushed.updates[0].apply_seconds, 2.0);
  EXPECT_DOUBLE_EQ(flushed.updates[1].apply_seconds, 3.0);
  EXPECT_DOUBLE_EQ(flushed.updates[2].apply_seconds, 5.0);
  EXPECT_EQ(flushed.updates[2].gradients.size(), 8u);
  EXPECT_EQ(flushed.updates[2].version_read, 2);
  EXPECT_TRUE(flushed.layer_staleness.empty());
}

// A pipeline's gradient is a micro-batch's: 32 worker rows / 4 micro-batches = 8 rows at 1/4 of
// the learning rate, so a row weighs as in a data-parallel step; throughput counts those rows,
// and the statistical efficiency compares rows with the reference's 32-row gradients.
TEST(PipelineConvergence, AMicroBatchGradientHoldsItsShareOfTheWorkersRows) {
  ConvergenceOptions options;
  options.problem = ProblemKind::kMlp;
  options.batch_per_worker = 32;
  options.target_loss = 0.45;
  options.max_gradients = 400;
  const ConvergenceStudy study = run_convergence_study({{"pipedream", pipeline_timings(true, 8, 4, 2)}}, options);
  ASSERT_EQ(study.runs.size(), 1u);
  const ConvergenceRun& run = study.runs.front();
  EXPECT_EQ(run.rows_per_gradient, 8);
  EXPECT_EQ(study.reference.rows_per_gradient, 32);
  ASSERT_TRUE(run.replay.target && study.reference.replay.target);
  const CurvePoint& target = *run.replay.target;
  EXPECT_DOUBLE_EQ(run.samples_per_second, 8.0 * static_cast<double>(target.applied_gradients) / target.seconds);
  EXPECT_DOUBLE_EQ(run.statistical_efficiency,
                   32.0 * static_cast<double>(study.reference.replay.target->applied_gradients) /
                       (8.0 * static_cast<double>(target.applied_gradients)));
  EXPECT_NE(study.notes.back().find("8 rows (32 per worker step / 4 micro-batches) at learning rate 0.025"),
            std::string::npos)
      << study.notes.back();
}

// PipeDream-2BW, 2 replicas x 4 micro-batches, 2 simulated steps (an update each, at 2 and 3 s):
// 20 gradients are 3 updates of 8, the third 1 s after the second (the last step's spacing),
// each reading its oldest layer 1 update back.
TEST(PipelineConvergence, DoubleBufferedPipelinesUpdateOncePerStepOneVersionBehind) {
  SimulatedTimings timings = pipeline_timings(false, 2, 4, 2);
  timings.asynchronous = true;
  timings.pipeline->double_buffered = true;
  const UpdateTrace trace = schedule_pipeline(timings, {1, 0}, 20);
  ASSERT_EQ(trace.updates.size(), 3u);
  const std::vector<double> applied{2.0, 3.0, 4.0};
  const std::vector<int64_t> read{0, 0, 1};
  for (size_t u = 0; u < 3; ++u) {
    EXPECT_DOUBLE_EQ(trace.updates[u].apply_seconds, applied[u]) << u;
    EXPECT_EQ(trace.updates[u].version_read, read[u]) << u;
    EXPECT_EQ(trace.updates[u].gradients.size(), 8u) << u;
  }
  EXPECT_EQ(trace.layer_staleness, (std::vector<int64_t>{1, 0}));
}

/// A simulated pipeline run (small GPT, pipeline 2 x 2 steps of 4 micro-batches, analytical
/// tier) under `schedule`, with the scenario's convergence block and its pipeline timings.
struct SimulatedPipeline {
  ConvergenceOptions convergence;
  double makespan_seconds = 0;
  SimulatedTimings timings;
};

SimulatedPipeline simulate_pipeline(const std::string& schedule) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("placesim_pipeline_convergence_" + schedule + ".json");
  std::ofstream(file) << R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128}},
    "cluster": {"template": "dgx_a100"},
    "strategy": {"parallelism": {"pipeline": 2, "micro_batches": 4, "stage_split": "layers", "schedule": ")" +
                             schedule + R"("}},
    "simulation": {"tier": "analytical"},
    "run": {"batch_size": 8, "steps": 2, "precision": "fp16", "optimizer": "adam"},
    "convergence": {"problem": "mlp", "max_gradients": 40, "target_loss": 0.3}
  })";
  const Scenario scenario =
      load_scenario(file, HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"));
  std::filesystem::remove(file);
  const EvaluatedStrategy evaluated = evaluate_strategy(scenario, scenario.strategies.front(), false);
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  return {*scenario.convergence, evaluated.run.metrics.makespan_seconds,
          extract_pipeline_timings(evaluated.planned.plan, evaluated.run.timeline, 2, 1, 4, p.asynchronous,
                                   p.double_buffered)};
}

// From a simulated PipeDream plan (small GPT, pipeline 2 x 2 steps of 4 micro-batches): 8
// updates, each ending after the previous, the last at the run's end; the study's PipeDream run
// reads the MLP's hidden layer 1 update stale (stage 0 of 2), its output layer fresh.
TEST(PipelineConvergence, TimingsComeFromTheSimulatedPipeline) {
  const SimulatedPipeline run = simulate_pipeline("pipedream");
  const SimulatedTimings& timings = run.timings;
  ASSERT_TRUE(timings.pipeline);
  const auto& ends = timings.pipeline->update_end_seconds;
  ASSERT_EQ(ends.size(), 8u);
  for (size_t u = 1; u < ends.size(); ++u) EXPECT_GT(ends[u], ends[u - 1]);
  EXPECT_DOUBLE_EQ(ends.back(), run.makespan_seconds);
  const ConvergenceStudy study = run_convergence_study({{"pipedream", timings}}, run.convergence);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_TRUE(study.runs.front().asynchronous);
  EXPECT_DOUBLE_EQ(study.runs.front().max_staleness, 1);
  ASSERT_FALSE(study.notes.empty());
  EXPECT_NE(study.notes.front().find("layer 0 on stage 0 (staleness 1), layer 1 on stage 1 (staleness 0)"),
            std::string::npos)
      << study.notes.front();
}

// The same run under PipeDream-2BW: 2 updates (one per step), the last at the run's end, 4
// gradients each; stage 0's layer one version stale, as PipeDream's with K = 2.
TEST(PipelineConvergence, DoubleBufferedTimingsComeFromTheSimulatedPipeline) {
  const SimulatedPipeline run = simulate_pipeline("pipedream-2bw");
  const SimulatedTimings& timings = run.timings;
  ASSERT_TRUE(timings.pipeline);
  EXPECT_EQ(timings.workers, 4);
  const auto& ends = timings.pipeline->update_end_seconds;
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_GT(ends[1], ends[0]);
  EXPECT_DOUBLE_EQ(ends.back(), run.makespan_seconds);
  const ConvergenceStudy study = run_convergence_study({{"2bw", timings}}, run.convergence);
  ASSERT_EQ(study.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(study.runs.front().max_staleness, 1);
  ASSERT_FALSE(study.notes.empty());
  EXPECT_NE(study.notes.front().find("PipeDream-2BW over 2 stages: layer 0 on stage 0 (staleness 1), layer 1 on stage 1 "
                                     "(staleness 0)"),
            std::string::npos)
      << study.notes.front();
}

}  // namespace
}  // namespace pipeline_convergence_test
}  // namespace placesim
