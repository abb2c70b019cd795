// Interleaved 1F1B (virtual pipeline stages; Narayanan et al. SC'21, "Efficient Large-Scale
// Language Model Training on GPU Clusters Using Megatron-LM", section 2.2.2) in the `parallelism`
// strategy: Megatron-LM's per-stage order; with equal layers and free transfers the step is
// (M + (K - 1)/V)(t_f + t_b), a bubble of (K - 1)/(V M) of the ideal M (t_f + t_b); the
// transfers between stages grow from 2 M (K - 1) to 2 M (K V - 1); the three tiers agree; bad
// values name their JSON path; V = 1 is the plain 1F1B plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/pipeline_builder.h"
#include "sim/report/metrics.h"
#include "sim/report/pipeline_metrics.h"
#include "sim/session/pipeline.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace interleaved_pipeline_test {  // a unity batch holds several test files
namespace {

constexpr double kPeak = 1e12;        // FLOP/s
constexpr double kLayerFlops = 1e10;  // forward, whole batch; backward is twice that
constexpr double kActivation = 1e6;   // bytes of each layer's input and output (and their gradients), whole batch

// ---------------------------------------------------------------------------------------------
// The schedule.

PipelineSlot f(int64_t m, int64_t chunk) { return {true, m, chunk}; }
PipelineSlot b(int64_t m, int64_t chunk) { return {false, m, chunk}; }

// K = 4 stages, V = 2 chunks, M = 8 micro-batches. Forwards go in groups of K micro-batches,
// chunk 0 then chunk 1 (F0..F3 of chunk 0, F0..F3 of chunk 1, F4..F7 of chunk 0, ...);
// backwards from chunk 1 down. Stage 0 warms up with (K - 0 - 1) x 2 + (V - 1) x K = 10
// forwards, alternates the remaining 16 - 10 = 6 forwards with the first 6 backwards, then
// runs the last 10 backwards.
TEST(InterleavedSchedule, StageZeroWarmsUpWithTenForwardsThenAlternates) {
  const std::vector<PipelineSlot> expected = {
      f(0, 0), f(1, 0), f(2, 0), f(3, 0), f(0, 1), f(1, 1), f(2, 1), f(3, 1), f(4, 0), f(5, 0),  // warm-up
      f(6, 0), b(0, 1), f(7, 0), b(1, 1), f(4, 1), b(2, 1), f(5, 1), b(3, 1), f(6, 1), b(0, 0),  // 1F1B
      f(7, 1), b(1, 0),                                                                          //
      b(2, 0), b(3, 0), b(4, 1), b(5, 1), b(6, 1), b(7, 1), b(4, 0), b(5, 0), b(6, 0), b(7, 0)};  // cool-down
  EXPECT_EQ(interleaved_schedule(4, 0, 2, 8), expected);
}

// The last stage warms up with (V - 1) x K = 4 forwards (chunk 0 of the first group), then
// alternates: its chunk 1 is the model's last chunk, whose backward can follow at once.
TEST(InterleavedSchedule, TheLastStageWarmsUpWithOneGroupOfChunkZero) {
  const std::vector<PipelineSlot> slots = interleaved_schedule(4, 3, 2, 8);
  ASSERT_EQ(slots.size(), 32u);
  const std::vector<PipelineSlot> start = {f(0, 0), f(1, 0), f(2, 0), f(3, 0), f(0, 1), b(0, 1), f(1, 1), b(1, 1)};
  EXPECT_TRUE(std::equal(start.begin(), start.end(), slots.begin()));
  // Each (micro-batch, chunk) once forward and once backward.
  for (int64_t m = 0; m < 8; ++m) {
    for (int64_t c = 0; c < 2; ++c) {
      EXPECT_EQ(std::count(slots.begin(), slots.end(), f(m, c)), 1);
      EXPECT_EQ(std::count(slots.begin(), slots.end(), b(m, c)), 1);
    }
  }
}

// Every stage's order, merged, never waits for a slot that waits for it.
TEST(InterleavedSchedule, IsDeadlockFree) {
  for (size_t stages : {2u, 4u, 8u}) {
    for (int64_t chunks : {2, 3, 4}) {
      for (int64_t groups : {1, 2, 3}) {
        const int64_t micro_batches = groups * static_cast<int64_t>(stages);
        std::vector<std::vector<PipelineSlot>> schedule;
        size_t slots = 0;
        for (size_t s = 0; s < stages; ++s) {
          schedule.push_back(interleaved_schedule(stages, s, chunks, micro_batches));
          slots += schedule.back().size();
        }
        std::vector<StageSlot> order;
        EXPECT_NO_THROW(order = emission_order(schedule, micro_batches, chunks));
        EXPECT_EQ(order.size(), slots) << stages << " stages, " << chunks << " chunks";
        EXPECT_EQ(slots, stages * static_cast<size_t>(2 * chunks * micro_batches));
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Equal layers, free transfers: the bubble.

/// `stages` GPUs, every two linked (the last stage sends to the first), each link fast enough
/// (1 PB/s, 1 ps) that transfers are negligible.
Cluster linked_gpus(size_t stages) {
  Cluster cluster = testing::gpus(stages, testing::round_gpu(kPeak, /*bandwidth=*/1e15));
  for (size_t i = 0; i < stages; ++i) {
    for (size_t j = i + 1; j < stages; ++j) {
      cluster.add_link(cluster.device(i).vertex, cluster.device(j).vertex, testing::round_link(1e15, 1e-12));
    }
  }
  return cluster;
}

/// An input and a chain of `layers` equal dense layers (backward = 2 x forward), with few
/// parameters so that the optimizer updates are negligible. Each layer keeps its input, A bytes,
/// for its backward.
OpGraph chain(size_t layers) {
  OpGraph graph;
  Op input;
  input.name = "input";
  input.type = "Placeholder";
  input.kind = OpKind::kDataMovement;
  input.output_bytes = kActivation;
  OpId previous = graph.add_op(input);
  for (size_t i = 0; i < layers; ++i) {
    OpId id = graph.add_op(testing::matmul_op("dense" + std::to_string(i), kLayerFlops, /*parameters=*/10, kActivation));
    graph.add_edge(previous, id, kActivation);
    previous = id;
  }
  return graph;
}

ParallelismOptions pipeline_of(int64_t stages, int64_t micro_batches, int64_t virtual_stages) {
  ParallelismOptions options;
  options.pipeline = stages;
  options.micro_batches = micro_batches;
  options.virtual_stages = virtual_stages;
  options.algorithm = CollectiveAlgorithm::kRing;
  for (int64_t s = 0; s < stages; ++s) options.devices.push_back(static_cast<DeviceId>(s));
  return options;
}

struct ChainRun {
  ExecutionPlan plan;
  SimulatedRun simulated;
  double analytical_seconds = 0;
  double closed_form_seconds = 0;
  PipelineMetrics metrics;
};

ChainRun run_chain(int64_t stages, size_t layers, int64_t micro_batches, int64_t virtual_stages) {
  const Cluster cluster = linked_gpus(static_cast<size_t>(stages));
  const OpGraph graph = chain(layers);
  const ParallelismOptions options = pipeline_of(stages, micro_batches, virtual_stages);
  RunOptions run;
  run.batch_size = 64;  // the graph's costs are for the whole batch; the plan divides them by M
  ChainRun result;
  result.plan = build_parallel_3d_plan(graph, cluster, run, options, "interleaved", nullptr);
  result.simulated = simulate_plan(result.plan, cluster);
  result.analytical_seconds = estimate_step(result.plan, cluster).step_seconds;
  result.closed_form_seconds = estimate_3d_step_closed_form(graph, cluster, run, options).step_seconds;
  result.metrics = compute_pipeline_metrics(result.simulated.metrics, options.devices, micro_batches, "1f1b", virtual_stages);
  result.metrics.traffic = count_stage_traffic(result.plan, options.devices);
  return result;
}

// K = 4 stages, M = 8 micro-batches, 16 equal layers: per micro-batch a stage's forward takes
// t_f = 4 layers x 1e10 FLOP / 8 / 1e12 FLOP/s = 5 ms and its backward t_b = 10 ms.
//
// Plain 1F1B (V = 1): the last stage starts F0 after the K - 1 stages before it ran theirs,
// (K - 1) t_f; from then on it is never idle (each forward arrives before it needs it, each
// backward is its own), M (t_f + t_b); the last backward then drains through the K - 1 stages
// before it, (K - 1) t_b. Step = (M + K - 1)(t_f + t_b) = 11 x 15 ms = 165 ms.
//
// Interleaved (V = 2): 8 chunks of 2 layers, chunk c on stage c mod 4, so a chunk's slots take
// t_f / V = 2.5 ms and t_b / V = 5 ms. The same argument on the last stage, whose first chunk is
// chunk 3: F0 reaches it after K - 1 chunk forwards, (K - 1) t_f / V; it then runs its 2 V M chunk
// slots, M (t_f + t_b), without waiting (its warm-up keeps every next input on the way); its last
// backward (chunk 3 of micro-batch 7) drains through chunks 2, 1, 0, (K - 1) t_b / V. Step =
// (M + (K - 1)/V)(t_f + t_b) = 9.5 x 15 ms = 142.5 ms: the bubble (K - 1)(t_f + t_b)/V = 22.5 ms
// is (K - 1)/(V M) = 3/16 of the ideal M (t_f + t_b) = 120 ms, against (K - 1)/M = 3/8 without
// interleaving (45 ms).
TEST(InterleavedPipeline, StepIsMPlusKMinusOneOverVStageTimes) {
  const int64_t stages = 4, micro_batches = 8;
  const size_t layers = 16;
  const double t_forward = static_cast<double>(layers) / stages * kLayerFlops / micro_batches / kPeak;  // 5 ms
  const double t_backward = 2 * t_forward;
  const double k = stages, m = micro_batches;
  for (int64_t v : {1, 2, 4}) {
    SCOPED_TRACE("V = " + std::to_string(v));
    const ChainRun r = run_chain(stages, layers, micro_batches, v);
    const double chunks = static_cast<double>(v);
    const double expected = (m + (k - 1) / chunks) * (t_forward + t_backward);
    EXPECT_NEAR(r.simulated.metrics.step_time_seconds, expected, expected * 1e-6);
    EXPECT_NEAR(r.analytical_seconds, expected, expected * 1e-6);
    EXPECT_NEAR(r.closed_form_seconds, expected, expected * 1e-6);
    // Bubble time against the ideal M (t_f + t_b): (K - 1)/(V M).
    const double ideal = m * (t_forward + t_backward);
    EXPECT_NEAR((r.simulated.metrics.step_time_seconds - ideal) / ideal, (k - 1) / (chunks * m), 1e-6);
    // Against the step, each stage's idle share: ((K - 1)/V) / (M + (K - 1)/V).
    EXPECT_DOUBLE_EQ(r.metrics.ideal_bubble_fraction, ((k - 1) / chunks) / (m + (k - 1) / chunks));
    EXPECT_NEAR(r.metrics.bubble_fraction, r.metrics.ideal_bubble_fraction, 1e-6);
  }
  EXPECT_NEAR(run_chain(stages, layers, micro_batches, 1).simulated.metrics.step_time_seconds, 0.165, 0.165 * 1e-6);
  EXPECT_NEAR(run_chain(stages, layers, micro_batches, 2).simulated.metrics.step_time_seconds, 0.1425, 0.1425 * 1e-6);
}

// Each of the K V - 1 boundaries between consecutive chunks (all on different stages, the wrap
// from stage K - 1 to stage 0 included) carries one activation forward and one gradient back
// per micro-batch: 2 M (K V - 1) transfers, against 2 M (K - 1) without interleaving, about V
// times as many (for K = 4, M = 8: 48, 112 with V = 2, 240 with V = 4). Bytes: 2 M (K V - 1)
// x A / M, each transfer carrying 1/M of the batch's activation (or its gradient), A.
TEST(InterleavedPipeline, TransfersBetweenStagesGrowWithTheChunks) {
  const int64_t stages = 4, micro_batches = 8;
  for (int64_t v : {1, 2, 4}) {
    SCOPED_TRACE("V = " + std::to_string(v));
    const ChainRun r = run_chain(stages, 16, micro_batches, v);
    ASSERT_TRUE(r.metrics.traffic);
    const int64_t boundaries = stages * v - 1;
    EXPECT_EQ(r.metrics.traffic->transfers, 2 * micro_batches * boundaries);
    EXPECT_NEAR(r.metrics.traffic->bytes, 2.0 * static_cast<double>(boundaries) * kActivation, 1e-6);
  }
  EXPECT_EQ(run_chain(stages, 16, micro_batches, 1).metrics.traffic->transfers, 48);
  EXPECT_EQ(run_chain(stages, 16, micro_batches, 2).metrics.traffic->transfers, 112);
}

// Memory follows the schedule. Each layer keeps its input, A / M per micro-batch, until its
// backward. Plain 1F1B: stage 0 holds K = 4 micro-batches of its 4 layers, 16 A / M, when its
// first backward starts. Interleaved (V = 2, M = 8): it holds 11 micro-batch chunks then (its
// 10 warm-up forwards and F(6) of chunk 0 before B(0) of chunk 1), each of 2 layers: 22 A / M;
// Megatron's factor 1 + (K - 1)/(K V) = 11/8 over plain 1F1B (Narayanan et al., section 2.2.2).
// On top, while the first of those backwards runs: the gradient it received from stage 1 and
// the one it produces, 2 A / M.
TEST(InterleavedPipeline, StageZeroHoldsElevenMicroBatchChunks) {
  const int64_t stages = 4, micro_batches = 8;
  const double per_layer = kActivation / micro_batches;
  const double plain = run_chain(stages, 16, micro_batches, 1).metrics.per_stage[0].peak_memory.activation_bytes;
  const double interleaved = run_chain(stages, 16, micro_batches, 2).metrics.per_stage[0].peak_memory.activation_bytes;
  EXPECT_NEAR(plain, (16 + 2) * per_layer, 1e-9 * plain);
  EXPECT_NEAR(interleaved, (22 + 2) * per_layer, 1e-9 * interleaved);
}

// ---------------------------------------------------------------------------------------------
// GPT: the closed-form and analytical tiers against each other and against SimGrid.

struct Config {
  int tensor = 1, pipeline = 2, data = 1, micro_batches = 4, virtual_stages = 2;
  bool recompute = false;
  std::string mode = "training";
};

std::string describe(const Config& c) {
  return "tp" + std::to_string(c.tensor) + " pp" + std::to_string(c.pipeline) + " dp" + std::to_string(c.data) + " m" +
         std::to_string(c.micro_batches) + " v" + std::to_string(c.virtual_stages) +
         (c.recompute ? " recompute " : " ") + c.mode;
}

// Eight GPT layers on four DGX A100 over InfiniBand, as in pipeline_closed_form_test.cpp.
std::string gpt_3d(const Config& c, const std::string& extra = "") {
  return R"({"model": {"zoo": "gpt", "parameters": {"layers": 8, "hidden": 1024, "heads": 16, "sequence": 512,
             "vocabulary": 32000}},
    "cluster": {"template": "dgx_a100", "nodes": 4, "fabric": {"link": "ib_hdr"}},
    "strategy": {"parallelism": {"tensor": )" +
         std::to_string(c.tensor) + R"(, "pipeline": )" + std::to_string(c.pipeline) + R"(, "data": )" +
         std::to_string(c.data) + R"(, "micro_batches": )" + std::to_string(c.micro_batches) +
         R"(, "virtual_stages": )" + std::to_string(c.virtual_stages) + R"(, "algorithm": "ring"}},
    "simulation": {"symmetry": "representatives"},
    "run": {"mode": ")" + c.mode + R"(", "batch_size": 16, "precision": "fp16", "optimizer": "adam", "steps": 1,
            "recompute": )" + (c.recompute ? "true" : "false") + "}" + extra + "}";
}

std::vector<Config> gpt_configs() {
  std::vector<Config> configs;
  Config two;  // tensor 1 x pipeline 2, 4 chunks
  configs.push_back(two);
  Config four;  // tensor 2 x pipeline 4, data 2, 8 chunks
  four.tensor = 2;
  four.pipeline = 4;
  four.data = 2;
  four.micro_batches = 8;
  configs.push_back(four);
  Config deep = two;  // 4 chunks per stage, recomputation
  deep.virtual_stages = 4;
  deep.recompute = true;
  configs.push_back(deep);
  Config inference = four;
  inference.data = 1;
  inference.mode = "inference";
  configs.push_back(inference);
  return configs;
}

// The closed form is the analytical tier's list schedule replayed per slot: equal to rounding,
// as for plain 1F1B (pipeline_closed_form_test.cpp). Its memory (each slot's peak in the cell
// plan, plus what the other micro-batch chunks in flight keep and the inputs already arriving
// for later slots) within the 1.5% pipeline_closed_form_test.cpp allows for plain 1F1B (seen:
// equal but for one stage, 0.3% below, 2026-12-01).
TEST(InterleavedPipeline, ClosedFormTierGivesTheAnalyticalTiersStep) {
  for (const Config& config : gpt_configs()) {
    SCOPED_TRACE(describe(config));
    const Scenario scenario = testing::scenario_from_text(gpt_3d(config));
    const Strategy& strategy = scenario.strategies.front();
    const Cluster& cluster = scenario.cluster_for(strategy);
    const PlannedScenario planned = plan_scenario(scenario);
    const AnalyticalStepEstimate whole = estimate_step(planned.plan, cluster);
    const ClosedFormStepEstimate estimate =
        estimate_3d_step_closed_form(scenario.graph, cluster, scenario.run, *strategy.parallelism);
    EXPECT_NEAR(estimate.step_seconds, whole.step_seconds, 1e-12 * whole.step_seconds);
    EXPECT_LT(estimate.cell_plan_tasks * 2, planned.plan.tasks.size());
    const RunMetrics metrics = compute_metrics(planned.plan, cluster, whole.timeline);
    const ParallelismOptions& p = *strategy.parallelism;
    ASSERT_EQ(estimate.forward_slot_seconds.size(), static_cast<size_t>(config.pipeline));
    for (int s = 0; s < config.pipeline; ++s) {
      const DeviceMetrics& device = metrics.devices[p.device(0, s, 0)];
      EXPECT_NEAR(estimate.stage_peak_memory[s].total(), device.peak_memory_bytes, 0.015 * device.peak_memory_bytes)
          << "stage " << s;
      // Micro-batch chunks in flight: the warm-up + 1, at most all M V.
      const int64_t warmup = (config.pipeline - s - 1) * 2 + (config.virtual_stages - 1) * config.pipeline;
      const int64_t expected = config.mode == "inference"
                                   ? 1
                                   : std::min<int64_t>(warmup + 1, config.micro_batches * config.virtual_stages);
      EXPECT_EQ(estimate.stage_micro_batches_in_flight[s], expected) << "stage " << s;
    }
  }
}

// SimGrid shares links between flows, which the analytical tier does not: within 1%, the
// tolerance of AnalyticalVersusSimGrid (analytical_test.cpp).
TEST(InterleavedPipeline, AnalyticalTierAgreesWithSimGrid) {
  for (const Config& config : gpt_configs()) {
    SCOPED_TRACE(describe(config));
    const Scenario scenario = testing::scenario_from_text(gpt_3d(config));
    const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
    const PlannedScenario planned = plan_scenario(scenario);
    const double simulated = simulate_plan(planned.plan, cluster).metrics.step_time_seconds;
    EXPECT_NEAR(estimate_step(planned.plan, cluster).step_seconds, simulated, 0.01 * simulated);
  }
}

// On the GPT the interleaved step is shorter than plain 1F1B's and sends more between stages.
TEST(InterleavedPipeline, ShrinksTheBubbleOfAGptAndSendsMore) {
  Config plain, interleaved;
  plain.tensor = interleaved.tensor = 2;
  plain.pipeline = interleaved.pipeline = 4;
  plain.micro_batches = interleaved.micro_batches = 8;
  plain.virtual_stages = 1;
  auto evaluate = [](const Config& c) {
    const Scenario scenario = testing::scenario_from_text(gpt_3d(c));
    return evaluate_strategy(scenario, scenario.strategies.front(), false);
  };
  const EvaluatedStrategy one = evaluate(plain), two = evaluate(interleaved);
  EXPECT_LT(two.run.metrics.step_time_seconds, one.run.metrics.step_time_seconds);
  EXPECT_LT(two.pipeline->bubble_fraction, one.pipeline->bubble_fraction);
  EXPECT_GT(two.pipeline->traffic->transfers, one.pipeline->traffic->transfers);
  EXPECT_EQ(two.pipeline->virtual_stages, 2);
  EXPECT_NE(two.result.description.find("interleaved 1F1B, 2 virtual stages"), std::string::npos)
      << two.result.description;
}

// ---------------------------------------------------------------------------------------------
// V = 1 and bad values.

// "virtual_stages": 1 is the default: the same plan, task by task.
TEST(InterleavedPipeline, OneVirtualStageIsThePlainPlan) {
  Config c;
  c.tensor = 2;
  c.pipeline = 4;
  c.micro_batches = 8;
  c.virtual_stages = 1;
  std::string without = gpt_3d(c);
  const std::string key = R"(, "virtual_stages": 1)";
  without.erase(without.find(key), key.size());
  const ExecutionPlan given = plan_scenario(testing::scenario_from_text(gpt_3d(c))).plan;
  const ExecutionPlan plain = plan_scenario(testing::scenario_from_text(without)).plan;
  ASSERT_EQ(given.tasks.size(), plain.tasks.size());
  for (size_t i = 0; i < given.tasks.size(); ++i) {
    EXPECT_EQ(given.tasks[i].name, plain.tasks[i].name);
    EXPECT_EQ(given.tasks[i].deps, plain.tasks[i].deps);
    EXPECT_EQ(given.tasks[i].device, plain.tasks[i].device);
    EXPECT_EQ(given.tasks[i].flops, plain.tasks[i].flops);
    EXPECT_EQ(given.tasks[i].bytes, plain.tasks[i].bytes);
  }
}

/// The InputError that loading and planning `text` raises.
InputError error_of(const std::string& text) {
  try {
    plan_scenario(testing::scenario_from_text(text));
  } catch (const InputError& error) {
    return error;
  }
  ADD_FAILURE() << "no error";
  return InputError("", "", "");
}

TEST(InterleavedPipeline, BadValuesNameTheirJsonPathAndValue) {
  const std::string path = "/strategy/parallelism/virtual_stages";
  Config c;
  c.virtual_stages = 0;
  InputError zero = error_of(gpt_3d(c));
  EXPECT_EQ(zero.json_path(), path);
  EXPECT_NE(zero.message().find("0"), std::string::npos) << zero.message();

  c.virtual_stages = 2;
  std::string gpipe = gpt_3d(c);
  gpipe.replace(gpipe.find(R"("algorithm")"), 0, R"("schedule": "gpipe", )");
  InputError schedule = error_of(gpipe);
  EXPECT_EQ(schedule.json_path(), path);
  EXPECT_NE(schedule.message().find("needs \"schedule\": \"1f1b\", got \"gpipe\""), std::string::npos)
      << schedule.message();

  Config one_stage;
  one_stage.pipeline = 1;
  InputError single = error_of(gpt_3d(one_stage));
  EXPECT_EQ(single.json_path(), path);
  EXPECT_NE(single.message().find("needs pipeline >= 2, got pipeline 1"), std::string::npos) << single.message();

  Config uneven;
  uneven.pipeline = 4;
  uneven.micro_batches = 6;
  InputError groups = error_of(gpt_3d(uneven));
  EXPECT_EQ(groups.json_path(), path);
  EXPECT_NE(groups.message().find("multiple of pipeline 4"), std::string::npos) << groups.message();
  EXPECT_NE(groups.message().find("micro_batches 6"), std::string::npos) << groups.message();

  // 4 x 64 = 256 chunks for a GPT of 8 layers, whose ops with FLOPs are fewer.
  Config many;
  many.pipeline = 4;
  many.micro_batches = 4;
  many.virtual_stages = 64;
  InputError chunks = error_of(gpt_3d(many));
  EXPECT_EQ(chunks.json_path(), path);
  EXPECT_NE(chunks.message().find("virtual_stages 64 splits the model into pipeline 4 x 64 = 256 chunks"),
            std::string::npos)
      << chunks.message();
}

}  // namespace
}  // namespace interleaved_pipeline_test
}  // namespace placesim
