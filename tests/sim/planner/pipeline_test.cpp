// Pipeline-parallel plans against the textbook schedules: K equal stages and M micro-batches
// take (M + K - 1) x (stage forward + backward) under GPipe and 1F1B alike, with a bubble of
// (K - 1) / (M + K - 1); GPipe's first stage holds M micro-batches of activations, 1F1B's K.
#include <gtest/gtest.h>

#include <map>

#include "sim/session/pipeline.h"
#include "sim/core/input_error.h"
#include "sim/spec/spec_error.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/planner/pipeline_builder.h"
#include "sim/report/pipeline_metrics.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace pipeline_test {  // a unity batch holds several test files
namespace {

constexpr double kPeak = 1e12;  // FLOP/s
constexpr double kLayerFlops = 1e10;
constexpr double kActivation = 1e6;  // bytes of each layer's output for the whole batch
constexpr double kGradient = 1e3;    // bytes of each gradient edge for the whole batch

/// `stages` GPUs in a line, each link fast enough (1 PB/s, 1 ps) that transfers are negligible.
Cluster line_of_gpus(size_t stages) {
  Cluster cluster = testing::gpus(stages, testing::round_gpu(kPeak, /*bandwidth=*/1e15));
  for (size_t i = 0; i + 1 < stages; ++i) {
    cluster.add_link(cluster.device(i).vertex, cluster.device(i + 1).vertex, testing::round_link(1e15, 1e-12));
  }
  return cluster;
}

/// A chain of `layers` equal dense layers (backward = 2 x forward), with few parameters so
/// that the optimizer updates are negligible.
OpGraph chain(size_t layers) {
  OpGraph graph;
  for (size_t i = 0; i < layers; ++i) {
    Op op;
    op.name = "dense" + std::to_string(i);
    op.type = "MatMul";
    op.kind = OpKind::kMatMul;
    op.forward_flops = kLayerFlops;
    op.backward_flops = 2 * kLayerFlops;
    op.parameter_count = 10;
    op.output_bytes = kActivation;
    OpId id = graph.add_op(op);
    if (i > 0) graph.add_edge(id - 1, id, kGradient);
  }
  return graph;
}

PipelineOptions pipeline(size_t stages, int64_t micro_batches, PipelineSchedule schedule) {
  PipelineOptions options;
  for (size_t s = 0; s < stages; ++s) options.devices.push_back(s);
  options.micro_batches = micro_batches;
  options.schedule = schedule;
  return options;
}

struct PipelineRun {
  ExecutionPlan plan;
  SimulatedRun run;
  PipelineMetrics metrics;
};

PipelineRun run_pipeline(size_t stages, size_t layers_per_stage, int64_t micro_batches, PipelineSchedule schedule) {
  Cluster cluster = line_of_gpus(stages);
  OpGraph graph = chain(stages * layers_per_stage);
  PipelineOptions options = pipeline(stages, micro_batches, schedule);
  RunOptions run;
  run.batch_size = 64;  // the graph's costs are for the whole batch; the plan divides them by M
  PipelineRun result;
  result.plan = build_pipeline_plan(graph, cluster, run, options, "pipeline", nullptr);
  result.run = simulate_plan(result.plan, cluster);
  result.metrics = compute_pipeline_metrics(result.run.metrics, options.devices, micro_batches, "test");
  return result;
}

/// The slots device `device` ran, in the order it started them (from task names "mbM/fwd/...").
std::vector<PipelineSlot> slots_run(const PipelineRun& r, DeviceId device) {
  std::vector<std::pair<double, PipelineSlot>> starts;
  std::map<std::pair<bool, int64_t>, double> first_start;
  for (const Task& task : r.plan.tasks) {
    if (task.kind != TaskKind::kCompute || task.device != device || task.phase == Phase::kOptimizer) continue;
    int64_t m = std::stoll(task.name.substr(2, task.name.find('/') - 2));
    auto key = std::make_pair(task.phase == Phase::kForward, m);
    double start = r.run.timeline.tasks[task.id].start_seconds;
    if (!first_start.count(key) || start < first_start[key]) first_start[key] = start;
  }
  for (const auto& [key, start] : first_start) starts.push_back({start, PipelineSlot{key.first, key.second}});
  std::stable_sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PipelineSlot> slots;
  for (const auto& entry : starts) slots.push_back(entry.second);
  return slots;
}

TEST(PipelineSchedule, GpipeRunsAllForwardsThenAllBackwards) {
  auto slots = pipeline_schedule(PipelineSchedule::kGpipe, 4, 1, 3);
  std::vector<PipelineSlot> expected = {{true, 0}, {true, 1}, {true, 2}, {false, 0}, {false, 1}, {false, 2}};
  EXPECT_EQ(slots, expected);
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithKMinusSMinusOneForwardsThenAlternates) {
  // Stage 1 of 4, 5 micro-batches: 2 warm-up forwards, then F2 B0 F3 B1 F4 B2, then B3 B4.
  auto slots = pipeline_schedule(PipelineSchedule::kOneFOneB, 4, 1, 5);
  std::vector<PipelineSlot> expected = {{true, 0}, {true, 1},  {true, 2},  {false, 0}, {true, 3},
                                        {false, 1}, {true, 4}, {false, 2}, {false, 3}, {false, 4}};
  EXPECT_EQ(slots, expected);
  // The last stage alternates from the start.
  auto last = pipeline_schedule(PipelineSchedule::kOneFOneB, 4, 3, 2);
  std::vector<PipelineSlot> alternate = {{true, 0}, {false, 0}, {true, 1}, {false, 1}};
  EXPECT_EQ(last, alternate);
}

TEST(PipelineSchedule, ASlotHoldsItsLargestMicroBatchAndChunkAndTheSchedulesRefuseMore) {
  // 8 bytes: 1 bit of direction, 47 of micro-batch, 16 of chunk (both signed).
  const PipelineSlot largest{false, PipelineSlot::kMaxMicroBatches - 1, PipelineSlot::kMaxChunks - 1};
  EXPECT_FALSE(largest.forward);
  EXPECT_EQ(largest.micro_batch, (int64_t{1} << 46) - 1);
  EXPECT_EQ(largest.chunk, 32767);
  EXPECT_THROW(pipeline_schedule(PipelineSchedule::kOneFOneB, 4, 0, PipelineSlot::kMaxMicroBatches + 1),
               std::logic_error);
  EXPECT_THROW(interleaved_schedule(4, 0, PipelineSlot::kMaxChunks + 1, 4, true), std::logic_error);
}

TEST(PipelineStages, EqualLayersSplitIntoEqualContiguousStages) {
  OpGraph graph = chain(8);
  auto stage_of = assign_pipeline_stages(graph, pipeline(4, 1, PipelineSchedule::kGpipe));
  for (OpId v = 0; v < 8; ++v) EXPECT_EQ(stage_of[v], v / 2) << graph.op(v).name;
}

// GPipe with K equal stages, M micro-batches, free transfers: stage s runs F_m in
// [(m + s) t_f, (m + s + 1) t_f); the last stage's forwards end at (M + K - 1) t_f, and the
// backwards drain in the mirror image, (M + K - 1) t_b. Each stage is busy M (t_f + t_b).
TEST(Pipeline, GpipeTakesMPlusKMinusOneStageTimesWithTheIdealBubble) {
  const size_t stages = 4, layers_per_stage = 2;
  const int64_t micro_batches = 8;
  PipelineRun r = run_pipeline(stages, layers_per_stage, micro_batches, PipelineSchedule::kGpipe);

  const double t_forward = layers_per_stage * kLayerFlops / micro_batches / kPeak;
  const double t_backward = 2 * t_forward;
  const double k = stages, m = static_cast<double>(micro_batches);
  const double expected = (m + k - 1) * (t_forward + t_backward);
  EXPECT_NEAR(r.run.metrics.step_time_seconds, expected, expected * 1e-6);
  EXPECT_DOUBLE_EQ(r.metrics.ideal_bubble_fraction, (k - 1) / (m + k - 1));
  EXPECT_NEAR(r.metrics.bubble_fraction, (k - 1) / (m + k - 1), 1e-6);
  for (size_t s = 0; s < stages; ++s) {
    EXPECT_EQ(slots_run(r, s), pipeline_schedule(PipelineSchedule::kGpipe, stages, s, micro_batches)) << "stage " << s;
  }
}

// 1F1B has the same bubble, (K - 1)(t_f + t_b), so the same time; but stage 0 starts
// micro-batch m's backward before micro-batch m + K's forward, so it holds at most K
// micro-batches of activations (K x L x A / M) where GPipe holds all M (L x A).
TEST(Pipeline, OneFOneBTakesTheSameTimeAsGpipeButHoldsKMicroBatchesOfActivations) {
  const size_t stages = 4, layers_per_stage = 2;
  const int64_t micro_batches = 8;
  PipelineRun gpipe = run_pipeline(stages, layers_per_stage, micro_batches, PipelineSchedule::kGpipe);
  PipelineRun one_f_one_b = run_pipeline(stages, layers_per_stage, micro_batches, PipelineSchedule::kOneFOneB);

  const double t_forward = layers_per_stage * kLayerFlops / micro_batches / kPeak;
  const double expected = (micro_batches + stages - 1) * 3 * t_forward;
  EXPECT_NEAR(one_f_one_b.run.metrics.step_time_seconds, expected, expected * 1e-6);
  EXPECT_NEAR(one_f_one_b.metrics.bubble_fraction, gpipe.metrics.bubble_fraction, 1e-6);
  for (size_t s = 0; s < stages; ++s) {
    EXPECT_EQ(slots_run(one_f_one_b, s), pipeline_schedule(PipelineSchedule::kOneFOneB, stages, s, micro_batches))
        << "stage " << s;
  }

  // One micro-batch's activations on a stage: L layers x A / M. Gradients in flight (a few
  // buffers of kGradient / M) come on top.
  const double per_micro_batch = layers_per_stage * kActivation / micro_batches;
  const double in_flight = 3 * kGradient / micro_batches;
  const double gpipe_first = gpipe.metrics.per_stage[0].peak_memory.activation_bytes;
  const double one_f_one_b_first = one_f_one_b.metrics.per_stage[0].peak_memory.activation_bytes;
  EXPECT_GE(gpipe_first, micro_batches * per_micro_batch);
  EXPECT_LE(gpipe_first, micro_batches * per_micro_batch + in_flight);
  EXPECT_GE(one_f_one_b_first, stages * per_micro_batch);
  EXPECT_LE(one_f_one_b_first, stages * per_micro_batch + in_flight);
  // Stage s > 0 of 1F1B holds K - s micro-batches, each with the activation it received, plus
  // the next micro-batch's input, which the previous stage sends as soon as it has it.
  const double received_per_micro_batch = (layers_per_stage + 1) * kActivation / micro_batches;
  const double received_early = kActivation / micro_batches;
  for (size_t s = 1; s < stages; ++s) {
    const double k_minus_s = static_cast<double>(stages - s);
    double held = one_f_one_b.metrics.per_stage[s].peak_memory.activation_bytes;
    EXPECT_GE(held, k_minus_s * received_per_micro_batch) << "stage " << s;
    EXPECT_LE(held, k_minus_s * received_per_micro_batch + received_early + in_flight) << "stage " << s;
  }
}

// Gradients accumulate over the micro-batches: one update per op with parameters per step.
TEST(Pipeline, OneOptimizerUpdatePerOpPerStep) {
  PipelineRun r = run_pipeline(2, 2, 4, PipelineSchedule::kOneFOneB);
  size_t updates = 0;
  for (const Task& task : r.plan.tasks) updates += task.phase == Phase::kOptimizer;
  EXPECT_EQ(updates, 4u);
}

// The bundled GPT scenario: the balanced split gives every stage about a quarter of the FLOPs;
// both schedules pay at least the ideal bubble; 1F1B's first stage holds fewer activations.
TEST(Pipeline, BundledGptScenarioBalancesStagesAndOneFOneBSavesMemory) {
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  Scenario scenario =
      load_scenario(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/pipeline_gpt_dgx1.json", catalog);
  ASSERT_EQ(scenario.strategies.size(), 2u);
  std::vector<size_t> stage_of = assign_pipeline_stages(scenario.graph, *scenario.strategies[0].pipeline);
  std::vector<double> flops(4, 0);
  double total = 0;
  for (OpId v = 0; v < scenario.graph.size(); ++v) {
    double op_flops = scenario.graph.op(v).forward_flops + scenario.graph.op(v).backward_flops;
    flops[stage_of[v]] += op_flops;
    total += op_flops;
  }
  for (size_t s = 0; s < 4; ++s) EXPECT_NEAR(flops[s], total / 4, 0.05 * total) << "stage " << s;

  EvaluatedStrategy gpipe = evaluate_strategy(scenario, scenario.strategies[0], false);
  EvaluatedStrategy one_f_one_b = evaluate_strategy(scenario, scenario.strategies[1], false);
  ASSERT_TRUE(gpipe.pipeline && one_f_one_b.pipeline);
  EXPECT_GE(gpipe.pipeline->bubble_fraction, gpipe.pipeline->ideal_bubble_fraction);
  EXPECT_GE(one_f_one_b.pipeline->bubble_fraction, one_f_one_b.pipeline->ideal_bubble_fraction);
  EXPECT_LT(one_f_one_b.pipeline->per_stage[0].peak_memory.activation_bytes,
            gpipe.pipeline->per_stage[0].peak_memory.activation_bytes);
}

// A hand-made split must follow the graph: a stage may not read from a later one.
TEST(PipelineStages, AStageReadingFromALaterStageIsRefusedNamingTheStages) {
  OpGraph graph = chain(4);
  PipelineOptions options = pipeline(2, 1, PipelineSchedule::kGpipe);
  options.stages = {{{"dense2", "dense3"}, 0}, {{"*"}, 1}};
  try {
    assign_pipeline_stages(graph, options);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.scope(), SpecError::Scope::kStrategy);
    EXPECT_EQ(error.option(), "pipeline/stages");
    EXPECT_NE(std::string(error.what()).find("op \"dense2\" (stage 0) reads \"dense1\" from the later stage 1"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace pipeline_test
}  // namespace placesim
