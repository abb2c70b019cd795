// "stage_split": "layers" in the `parallelism` strategy: pipeline stages (model chunks with
// interleaving) of whole transformer layers, as Megatron-LM and DeepSpeed's `type:transformer`
// partition assign them: the blocks split evenly, what precedes the first block on the first
// stage, what follows the last on the last. The default, "compute", may cut inside a layer.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "sim/analytical/analytical_engine.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "tests/support/closed_form_steps.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace whole_layer_stages_test {  // a unity batch holds several test files
namespace {

// A small GPT (L layers, h = 64, 8 heads, T = 32, V = 128) in fp16 with Adam on one DGX A100.
std::string gpt_scenario(int layers, const std::string& parallelism, const std::string& simulation = "{}") {
  return R"({"model": {"zoo": "gpt", "parameters": {"layers": )" + std::to_string(layers) +
         R"(, "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128}},
    "cluster": {"template": "dgx_a100"},
    "strategy": {"parallelism": )" +
         parallelism + R"(},
    "simulation": )" + simulation + R"(,
    "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 1}})";
}

/// The pipeline stage each op's forward runs on (replica 0, tensor rank 0), by op name.
std::map<std::string, int64_t> stage_of_ops(const std::string& text) {
  const Scenario scenario = testing::scenario_from_text(text);
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  std::map<DeviceId, int64_t> stage_of_device;
  for (int64_t s = 0; s < p.pipeline; ++s) stage_of_device[p.device(0, s, 0)] = s;
  std::map<std::string, int64_t> stages;
  for (const Task& task : plan_scenario(scenario).plan.tasks) {
    if (task.kind != TaskKind::kCompute || task.phase != Phase::kForward || task.op.empty()) continue;
    if (auto it = stage_of_device.find(task.device); it != stage_of_device.end()) stages[task.op] = it->second;
  }
  return stages;
}

/// The stages holding any op of layer "h.<k>".
std::set<int64_t> stages_of_layer(const std::map<std::string, int64_t>& stages, int k) {
  std::set<int64_t> found;
  const std::string prefix = "h." + std::to_string(k) + "/";
  for (const auto& [op, stage] : stages) {
    if (op.rfind(prefix, 0) == 0) found.insert(stage);
  }
  return found;
}

// 8 layers on 4 stages: layers 2s and 2s + 1 on stage s, each whole; the token ids and the
// embedding with layer 0 on stage 0, the final norm, the logits and the loss on stage 3.
TEST(WholeLayerStages, EachStageHoldsTheSameNumberOfWholeLayers) {
  const auto stages = stage_of_ops(gpt_scenario(8, R"({"pipeline": 4, "stage_split": "layers"})"));
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(stages_of_layer(stages, k), (std::set<int64_t>{k / 2})) << "layer h." << k;
  }
  EXPECT_EQ(stages.at("embedding/wte"), 0);
  EXPECT_EQ(stages.at("lm_head/MatMul"), 3);
  for (const auto& [op, stage] : stages) {
    if (op.rfind("h.", 0) != 0 && op.rfind("embedding", 0) != 0 && op.rfind("input", 0) != 0) {
      EXPECT_EQ(stage, 3) << op << " follows the last layer";
    }
  }
}

// Interleaved, 8 layers on pipeline 2 x virtual_stages 2 = 4 chunks of 2 layers: chunk c on
// stage c mod 2, so layers 0-1 and 4-5 on stage 0, layers 2-3 and 6-7 on stage 1.
TEST(WholeLayerStages, InterleavedChunksTakeWholeLayersInTurn) {
  const auto stages = stage_of_ops(
      gpt_scenario(8, R"({"pipeline": 2, "virtual_stages": 2, "micro_batches": 2, "stage_split": "layers"})"));
  const int64_t expected[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(stages_of_layer(stages, k), (std::set<int64_t>{expected[k]})) << "h." << k;
}

// Balanced by compute (the default), the embedding and the logits weigh on the first and last
// stages, so the cuts move off the layer boundaries: with 4 layers on 3 stages some layer is
// split, which "layers" never does.
TEST(WholeLayerStages, TheComputeSplitMayCutALayerTheLayerSplitNever) {
  const auto compute = stage_of_ops(gpt_scenario(4, R"({"pipeline": 3})"));
  const auto layers = stage_of_ops(gpt_scenario(6, R"({"pipeline": 3, "stage_split": "layers"})"));
  bool cut = false;
  for (int k = 0; k < 4; ++k) cut = cut || stages_of_layer(compute, k).size() > 1;
  EXPECT_TRUE(cut) << "the compute split of 4 layers over 3 stages keeps every layer whole";
  for (int k = 0; k < 6; ++k) EXPECT_EQ(stages_of_layer(layers, k).size(), 1u) << "h." << k;
}

// The split follows each op's `layer` field, not its name: a model-graph file may name ops freely
// (here `fc1`, `act1`, ... in layers `block.0` to `block.3`, after an input and before a loss).
// Four layers on two stages: blocks 0-1 on stage 0 with the input, blocks 2-3 on stage 1 with
// the loss. (Matching names against "block.N/*" matched nothing: every op fell to stage 0 and
// the plan was refused with "stage 1 gets no op".)
TEST(WholeLayerStages, LayersComeFromTheOpsLayerFieldNotTheirNames) {
  std::string ops = R"({"name": "x", "type": "Placeholder", "kind": "data_movement", "output_bytes": 4096})";
  std::string previous = "x";
  for (int k = 0; k < 4; ++k) {
    const std::string fc = "fc" + std::to_string(k), act = "act" + std::to_string(k);
    const std::string layer = "block." + std::to_string(k);
    ops += R"(, {"name": ")" + fc + R"(", "type": "MatMul", "kind": "matmul", "inputs": [")" + previous +
           R"("], "forward_flops": 1e9, "backward_flops": 2e9, "parameters": 1e6, "output_bytes": 4096, "layer": ")" +
           layer + R"("})";
    ops += R"(, {"name": ")" + act + R"(", "type": "Relu", "kind": "elementwise", "inputs": [")" + fc +
           R"("], "forward_flops": 1e3, "backward_flops": 1e3, "output_bytes": 4096, "layer": ")" + layer + R"("})";
    previous = act;
  }
  ops += R"(, {"name": "loss", "type": "Loss", "kind": "reduction", "inputs": [")" + previous +
         R"("], "forward_flops": 1e3, "backward_flops": 1e3, "output_bytes": 4})";
  const std::string text = R"({"model": {"graph": {"ops": [)" + ops + R"(]}},
    "cluster": {"template": "dgx_a100"},
    "strategy": {"parallelism": {"pipeline": 2, "stage_split": "layers"}},
    "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 1}})";
  const auto stages = stage_of_ops(text);
  const std::map<std::string, int64_t> expected = {{"fc0", 0}, {"act0", 0}, {"fc1", 0}, {"act1", 0},
                                                   {"fc2", 1}, {"act2", 1}, {"fc3", 1}, {"act3", 1}, {"loss", 1}};
  for (const auto& [op, stage] : expected) EXPECT_EQ(stages.at(op), stage) << op;
}

// Layers that do not divide among the stages (or chunks) are refused at the key's path, with
// the counts.
TEST(WholeLayerStages, LayersThatDoNotDivideAreRefused) {
  for (const auto& [parallelism, words] :
       std::vector<std::pair<std::string, std::string>>{
           {R"({"pipeline": 3, "stage_split": "layers"})", "8 layers do not split evenly into 3 pipeline stages"},
           {R"({"pipeline": 2, "virtual_stages": 3, "micro_batches": 2, "stage_split": "layers"})",
            "8 layers do not split evenly into 6 model chunks (pipeline 2 x virtual_stages 3)"}}) {
    SCOPED_TRACE(parallelism);
    try {
      plan_scenario(testing::scenario_from_text(gpt_scenario(8, parallelism)));
      FAIL() << "accepted";
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("/strategy/parallelism/stage_split"), std::string::npos) << message;
      EXPECT_NE(message.find(words), std::string::npos) << message;
    }
  }
}

// The closed-form tier times the same plan as the analytical tier (one micro-batch's cells).
TEST(WholeLayerStages, ClosedFormTierGivesTheAnalyticalStep) {
  const Scenario scenario = testing::scenario_from_text(gpt_scenario(
      8, R"({"pipeline": 4, "micro_batches": 4, "stage_split": "layers"})", R"({"symmetry": "representatives"})"));
  testing::expect_closed_form_gives_the_analytical_step(scenario);
}

}  // namespace
}  // namespace whole_layer_stages_test
}  // namespace placesim
