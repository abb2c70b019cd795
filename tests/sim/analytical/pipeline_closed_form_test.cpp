// The closed-form tier for 3D steps (sim/analytical/pipeline_closed_form.h) against the analytical
// tier on the step's whole plan: the same list schedule of the same tasks, so the same step time
// to rounding, for GPipe and 1F1B, with and without tensor and data parallelism and
// recomputation, in training and inference; and refused where the replicas are not identical.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/session/pipeline.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/spec/spec_error.h"
#include "sim/report/metrics.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

Scenario load(const std::string& text) { return testing::scenario_from_text(text); }

struct Config {
  int tensor = 1, pipeline = 2, data = 1, micro_batches = 4;
  std::string schedule = "1f1b";
  bool recompute = false;
  bool sequence_parallel = false;
  std::string mode = "training";
  std::string extra;  ///< more top-level keys
  std::string parallelism_extra;  ///< more keys of the parallelism block
};

std::string describe(const Config& c) {
  return c.parallelism_extra + "tp" + std::to_string(c.tensor) + " pp" + std::to_string(c.pipeline) + " dp" + std::to_string(c.data) + " m" +
         std::to_string(c.micro_batches) + " " + c.schedule + (c.recompute ? " recompute " : " ") +
         (c.sequence_parallel ? "sp " : "") + c.mode;
}

// Eight GPT layers on four DGX A100 over InfiniBand: stages cross nodes once the pipeline and
// the tensor groups outgrow one node.
std::string gpt_3d(const Config& c) {
  return R"({"model": {"zoo": "gpt", "parameters": {"layers": 8, "hidden": 1024, "heads": 16, "sequence": 512,
             "vocabulary": 32000}},
    "cluster": {"template": "dgx_a100", "nodes": 4, "fabric": {"link": "ib_hdr"}},
    "strategy": {"parallelism": {"tensor": )" +
         std::to_string(c.tensor) + R"(, "pipeline": )" + std::to_string(c.pipeline) + R"(, "data": )" +
         std::to_string(c.data) + R"(, "micro_batches": )" + std::to_string(c.micro_batches) + R"(, "schedule": ")" +
         c.schedule + R"(", "algorithm": "ring", "sequence_parallel": )" + (c.sequence_parallel ? "true" : "false") +
         R"(, "selective_recompute": )" + (c.sequence_parallel && !c.recompute ? "true" : "false") + c.parallelism_extra +
         R"(}},
    "simulation": {"symmetry": "representatives"},
    "run": {"mode": ")" + c.mode + R"(", "batch_size": 16, "precision": "fp16", "optimizer": "adam", "steps": 1,
            "recompute": )" + (c.recompute ? "true" : "false") + "}" + c.extra + "}";
}

ClosedFormStepEstimate closed_form(const Scenario& scenario) {
  const Strategy& strategy = scenario.strategies.front();
  return estimate_3d_step_closed_form(scenario.graph, scenario.cluster_for(strategy), scenario.run,
                                      *strategy.parallelism);
}

TEST(PipelineClosedForm, GivesTheAnalyticalTiersStepWithoutThePlan) {
  std::vector<Config> configs;
  for (int tensor : {1, 2}) {
    for (int pipeline : {2, 4}) {
      for (const char* schedule : {"1f1b", "gpipe"}) {
        Config c;
        c.tensor = tensor;
        c.pipeline = pipeline;
        c.data = tensor == pipeline ? 1 : 2;
        c.micro_batches = pipeline == 4 ? 8 : 4;
        c.schedule = schedule;
        c.recompute = tensor == 2 && pipeline == 2;
        configs.push_back(c);
      }
    }
  }
  Config single;  // one micro-batch: the cell plan is the whole plan
  single.tensor = 2;
  single.data = 2;
  single.micro_batches = 1;
  configs.push_back(single);
  Config sequence;  // sequence parallelism and selective recomputation
  sequence.tensor = 4;
  sequence.pipeline = 2;
  sequence.data = 2;
  sequence.micro_batches = 4;
  sequence.sequence_parallel = true;
  configs.push_back(sequence);
  Config nccl;  // the framework's transports: NCCL's share of the GPUs it overlaps, across machines too
  nccl.tensor = 4;
  nccl.pipeline = 2;
  nccl.data = 2;
  nccl.micro_batches = 4;
  nccl.parallelism_extra = R"(, "framework": "megatron")";
  configs.push_back(nccl);
  Config inference;
  inference.tensor = 2;
  inference.pipeline = 4;
  inference.micro_batches = 8;
  inference.mode = "inference";
  configs.push_back(inference);

  for (const Config& config : configs) {
    SCOPED_TRACE(describe(config));
    const Scenario scenario = load(gpt_3d(config));
    const PlannedScenario planned = plan_scenario(scenario);
    const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
    const AnalyticalStepEstimate whole = estimate_step(planned.plan, cluster);
    const double analytical = whole.step_seconds;
    const ClosedFormStepEstimate estimate = closed_form(scenario);
    // Exact to rounding, but where NCCL's kernels take a share of the GPUs they overlap: in the
    // step one micro-batch's collectives also overlap another's compute, which the
    // one-micro-batch cell cannot see (0.03% here, measured 2026-12-03).
    EXPECT_NEAR(estimate.step_seconds, analytical, (config.parallelism_extra.empty() ? 1e-12 : 1e-3) * analytical);
    // It estimated one micro-batch's tasks, not the step's.
    if (config.micro_batches > 1) {
      EXPECT_LT(estimate.cell_plan_tasks * 2, planned.plan.tasks.size());
    }
    ASSERT_EQ(estimate.forward_slot_seconds.size(), static_cast<size_t>(config.pipeline));
    const RunMetrics metrics = compute_metrics(planned.plan, cluster, whole.timeline);
    const ParallelismOptions& p = *scenario.strategies.front().parallelism;
    for (int s = 0; s < config.pipeline; ++s) {
      EXPECT_GT(estimate.forward_slot_seconds[s], 0);
      if (config.mode == "training") {
        EXPECT_GT(estimate.backward_slot_seconds[s], estimate.forward_slot_seconds[s]);
      } else {
        EXPECT_EQ(estimate.backward_slot_seconds[s], 0);
      }
      // Memory: the larger of the cell's peak and a micro-batch's own peak (without what only the
      // updates keep) plus k - 1 micro-batches' kept activations, against the whole plan's peak
      // on the same device. Equal but for a received activation that arrives while another
      // micro-batch peaks: 1F1B's middle stages 1.1-1.2% below here, the others within 0.5%.
      const DeviceMetrics& device = metrics.devices[p.device(0, s, 0)];
      const MemoryBreakdown& memory = estimate.stage_peak_memory[s];
      EXPECT_NEAR(memory.total(), device.peak_memory_bytes, 0.015 * device.peak_memory_bytes) << "stage " << s;
      EXPECT_DOUBLE_EQ(memory.parameter_bytes + memory.gradient_bytes + memory.optimizer_state_bytes,
                       device.static_memory_bytes);
      EXPECT_DOUBLE_EQ(memory.workspace_bytes, device.peak_memory.workspace_bytes);
      EXPECT_EQ(estimate.stage_memory_capacity_bytes[s], device.memory_capacity_bytes);
      const int64_t expected_in_flight = config.mode == "inference" ? 1
                                         : config.schedule == "gpipe" ? config.micro_batches
                                                                      : std::min(config.micro_batches, config.pipeline - s);
      EXPECT_EQ(estimate.stage_micro_batches_in_flight[s], expected_in_flight) << "stage " << s;
    }
  }
}

// Data parallelism over two DGX A100 (8 GPUs each, one HDR port per GPU) with gradient
// accumulation (4 micro-batches, one bucket after the last). The whole plan's all-reduce takes the
// faster estimate, the ring (NCCL's rings through all 16 GPUs, 8 channels each leaving a machine
// through its own NIC, all hops at once), not hierarchical (the reduce-scatter inside, the rails'
// all-reduce and the all-gather inside one after another); the closed form's cell plan, timed by
// the same analytical engine, takes the same and gives the same step.
TEST(PipelineClosedForm, DataParallelAcrossMachinesTakesTheAnalyticalTiersAllReduce) {
  auto scenario_text = [](const std::string& algorithm) {
    return R"({"model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 1024, "heads": 16, "sequence": 512,
               "vocabulary": 32000}},
      "cluster": {"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}},
      "strategy": {"parallelism": {"data": 16, "micro_batches": 4, "bucket_bytes": 1e12)" +
           algorithm + R"(}},
      "run": {"batch_size": 16, "precision": "fp16", "optimizer": "adam"}})";
  };
  const Scenario scenario = load(scenario_text(""));
  const PlannedScenario planned = plan_scenario(scenario);
  size_t all_reduces = 0;
  for (const Task& task : planned.plan.tasks) {
    if (task.kind != TaskKind::kCollective) continue;
    ++all_reduces;
    EXPECT_EQ(task.group.size(), 16u);
    EXPECT_EQ(task.algorithm, CollectiveAlgorithm::kRing) << task.name;
  }
  EXPECT_EQ(all_reduces, 1u);  // one bucket, one collective task for its group
  const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
  const double analytical = estimate_step(planned.plan, cluster).step_seconds;
  const double estimate = closed_form(scenario).step_seconds;
  EXPECT_NEAR(estimate, analytical, 1e-12 * analytical);
  // Hierarchical (the scenario's choice) adds its phases inside the machines to the rails': slower.
  EXPECT_GT(closed_form(load(scenario_text(R"(, "algorithm": "hierarchical")"))).step_seconds, estimate);
}

// What a layout search may build on (docs/llm-planning.md, "Search speed"): a middle stage of
// whole layers (no embedding, no logits) runs its slots, without their inputs, in a time
// proportional to its layers. Twelve GPT layers on 3, 4 and 6 stages (4, 3 and 2 layers each):
// stage 1's forward and backward slots per layer agree to rounding, for tensor 1 and 2, with
// and without full recomputation, on stages that do and do not cross machines.
// Every GPU alike ("gpu_spread": "none"): the slowest of 6, 8 or 12 GPUs differs.
TEST(PipelineClosedForm, AMiddleStagesSlotsGrowInProportionToItsLayers) {
  for (int tensor : {1, 2}) {
    for (bool recompute : {false, true}) {
      std::vector<double> forward_per_layer, backward_per_layer;
      for (int pipeline : {3, 4, 6}) {
        SCOPED_TRACE("tp" + std::to_string(tensor) + " pp" + std::to_string(pipeline) +
                     (recompute ? " recompute" : ""));
        const Scenario scenario = load(R"({"model": {"zoo": "gpt", "parameters": {"layers": 12, "hidden": 1024,
              "heads": 16, "sequence": 512, "vocabulary": 32000}},
            "cluster": {"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}},
            "strategy": {"parallelism": {"tensor": )" + std::to_string(tensor) + R"(, "pipeline": )" +
                                       std::to_string(pipeline) + R"(, "data": 1, "micro_batches": 6,
              "stage_split": "layers"}},
            "simulation": {"gpu_spread": "none"},
            "run": {"batch_size": 12, "precision": "fp16", "optimizer": "adam", "recompute": )" +
                                       (recompute ? "true" : "false") + "}}");
        const ClosedFormStepEstimate estimate = closed_form(scenario);
        const double layers = 12.0 / pipeline;
        forward_per_layer.push_back(estimate.forward_slot_seconds[1] / layers);
        backward_per_layer.push_back(estimate.backward_slot_seconds[1] / layers);
        // The first stage also embeds, the last also takes the logits and the loss.
        EXPECT_GT(estimate.forward_slot_seconds.front(), estimate.forward_slot_seconds[1]);
        EXPECT_GT(estimate.forward_slot_seconds.back(), estimate.forward_slot_seconds[1]);
      }
      for (size_t i = 1; i < forward_per_layer.size(); ++i) {
        EXPECT_NEAR(forward_per_layer[i], forward_per_layer[0], 1e-9 * forward_per_layer[0]);
        EXPECT_NEAR(backward_per_layer[i], backward_per_layer[0], 1e-9 * backward_per_layer[0]);
      }
    }
  }
}

// One micro-batch runs alike under GPipe and 1F1B: the 1F1B layout's cell fits the GPipe one and
// gives its whole estimate (the slots' sum differs only by the schedule's recurrence), but not a
// layout with other stages or model chunks.
// Tensor 2 x pipeline 4 x data 2, 8 micro-batches of 1F1B: a cell with a warm-up on every stage
// but the last.
Config four_stages() {
  Config c;
  c.tensor = 2;
  c.pipeline = 4;
  c.data = 2;
  c.micro_batches = 8;
  return c;
}

TEST(PipelineClosedForm, ACellServesGpipeAnd1f1bButNotOtherStagesOrChunks) {
  const Config one_f_one_b = four_stages();
  Config gpipe = one_f_one_b;
  gpipe.schedule = "gpipe";
  const Scenario a = load(gpt_3d(one_f_one_b)), b = load(gpt_3d(gpipe));
  const ParallelismOptions& pa = *a.strategies.front().parallelism;
  const ParallelismOptions& pb = *b.strategies.front().parallelism;
  const ClosedFormCell cell = analyse_3d_cell(a.graph, a.cluster_for(a.strategies.front()), a.run, pa);
  ASSERT_TRUE(cell_fits(cell, pb));
  const ClosedFormStepEstimate shared = estimate_3d_step_from_cell(cell, pb), own = closed_form(b);
  EXPECT_EQ(shared.step_seconds, own.step_seconds);
  EXPECT_NE(shared.step_seconds, closed_form(a).step_seconds);  // GPipe's recurrence, not 1F1B's
  ASSERT_EQ(shared.stage_peak_memory.size(), own.stage_peak_memory.size());
  for (size_t s = 0; s < own.stage_peak_memory.size(); ++s) {
    EXPECT_EQ(shared.stage_peak_memory[s].total(), own.stage_peak_memory[s].total()) << s;
    EXPECT_EQ(shared.stage_micro_batches_in_flight[s], own.stage_micro_batches_in_flight[s]) << s;
  }
  // GPipe keeps all 8 micro-batches in flight on every stage; 1F1B keeps 4 - s on stage s.
  EXPECT_EQ(shared.stage_micro_batches_in_flight, (std::vector<int64_t>{8, 8, 8, 8}));
  EXPECT_EQ(closed_form(a).stage_micro_batches_in_flight, (std::vector<int64_t>{4, 3, 2, 1}));
  ParallelismOptions deeper = pb, interleaved = pb;
  deeper.pipeline = 2;
  interleaved.virtual_stages = 2;
  EXPECT_FALSE(cell_fits(cell, deeper));
  EXPECT_FALSE(cell_fits(cell, interleaved));
}

bool same_step(const ClosedFormStepEstimate& a, const ClosedFormStepEstimate& b) {
  if (a.step_seconds != b.step_seconds || a.stage_end_seconds != b.stage_end_seconds ||
      a.stage_micro_batches_in_flight != b.stage_micro_batches_in_flight) {
    return false;
  }
  for (size_t s = 0; s < a.stage_peak_memory.size(); ++s) {
    if (a.stage_peak_memory[s].total() != b.stage_peak_memory[s].total()) return false;
  }
  return true;
}

TEST(PipelineClosedForm, AStepCopiesTheSlotsItSharesWithTheLastStepOfItsCellToTheLastBit) {
  const Scenario scenario = load(gpt_3d(four_stages()));
  const ParallelismOptions& options = *scenario.strategies.front().parallelism;
  const ClosedFormCell cell =
      analyse_3d_cell(scenario.graph, scenario.cluster_for(scenario.strategies.front()), scenario.run, options);
  // Fewer micro-batches than stages (1F1B's warm-up cut short), as many, more, and back again.
  for (PipelineSchedule schedule : {PipelineSchedule::kOneFOneB, PipelineSchedule::kGpipe}) {
    ClosedFormRecurrence recurrence;
    int64_t most = 0;
    for (int64_t micro_batches : {8, 3, 12, 1, 5, 40, 2, 4, 7, 40}) {
      ParallelismOptions step = options;
      step.schedule = schedule;
      step.micro_batches = micro_batches;
      const ClosedFormStepOrder order = closed_form_step_order(cell, step);
      const ClosedFormStepEstimate copied = estimate_3d_step_from_cell(cell, step, order, &recurrence);
      EXPECT_TRUE(same_step(copied, estimate_3d_step_from_cell(cell, step, order)))
          << (schedule == PipelineSchedule::kGpipe ? "GPipe, " : "1F1B, ") << micro_batches << " micro-batches";
      most = std::max(most, micro_batches);
      EXPECT_EQ(recurrence.micro_batches, most);  // the longest step so far serves the next
    }
  }

  // Which slots a step copies, worked out by hand: after 8 micro-batches of 1F1B on 4 stages, a
  // step of 5 shares on stage 0 (warm-up 3) its first 3 + 2 x (5 - 3) = 7 slots, F0..F4 B0 B1;
  // on stage 2 (warm-up 1) its first 1 + 2 x 4 = 9, F0..F4 B0..B3; on stage 3 (no warm-up) its
  // first 10 but the last, F0..F4 B0..B3. A recorded end time changed in a stage's last copied
  // slot moves the step (the stage's next slot, computed, starts after it); one outside does not.
  ParallelismOptions eight = options, five = options;
  eight.micro_batches = 8;
  five.micro_batches = 5;
  const ClosedFormStepOrder order_of_five = closed_form_step_order(cell, five);
  const ClosedFormStepEstimate own = estimate_3d_step_from_cell(cell, five, order_of_five);
  auto with_changed = [&](bool forward, size_t stage, size_t micro_batch) {
    ClosedFormRecurrence recurrence;
    estimate_3d_step_from_cell(cell, eight, closed_form_step_order(cell, eight), &recurrence);
    EXPECT_EQ(recurrence.micro_batches, 8);
    (forward ? recurrence.forward_end : recurrence.backward_end)[stage * 8 + micro_batch] += 1.0;  // a second late
    return estimate_3d_step_from_cell(cell, five, order_of_five, &recurrence);
  };
  EXPECT_FALSE(same_step(with_changed(false, 0, 1), own));  // stage 0's B1: copied
  EXPECT_TRUE(same_step(with_changed(false, 0, 2), own));   // its B2: computed
  EXPECT_FALSE(same_step(with_changed(false, 2, 3), own));  // stage 2's B3: copied
  EXPECT_TRUE(same_step(with_changed(false, 2, 4), own));   // its B4: computed
  EXPECT_FALSE(same_step(with_changed(true, 3, 4), own));   // stage 3's F4: copied
  EXPECT_TRUE(same_step(with_changed(false, 3, 4), own));   // its B4, its last slot: computed
}

TEST(PipelineClosedForm, IsRefusedWhereReplicasDiffer) {
  Config c;
  c.data = 2;
  c.extra = R"(, "perturbations": {"jitter": {"sigma": 0.1}})";
  const Scenario scenario = load(gpt_3d(c));
  EXPECT_GT(scenario.run.jitter_sigma, 0);
  try {
    closed_form(scenario);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.scope(), SpecError::Scope::kRun);
    EXPECT_EQ(error.option(), "simulation/tier");
    EXPECT_NE(error.message().find("jitter"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace placesim
