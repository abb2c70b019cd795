// MFU, HFU, tokens/s and the three batches (docs/llm-planning.md), against figures derived by hand.
#include <gtest/gtest.h>

#include "models/zoo.h"
#include "sim/graph/model_flops.h"
#include "sim/report/training_efficiency.h"
#include "sim/spec/batch_sizes.h"

namespace placesim {
namespace {

// A small GPT: L = 2 layers, hidden h = 64, H = 4 heads of Q = 16, T = 32 tokens, V = 100.
OpGraph small_gpt(int64_t batch) {
  Json parameters = {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"sequence", 32}, {"vocabulary", 100}};
  return build_zoo_model("gpt", JsonReader(parameters, "test"), batch, /*fp16=*/2);
}

TEST(ModelFlops, FindsTheTransformerShapeInTheAttentionScores) {
  auto shape = transformer_shape(small_gpt(8));
  ASSERT_TRUE(shape.has_value());
  EXPECT_EQ(shape->layers, 2);
  EXPECT_EQ(shape->heads, 4);
  EXPECT_EQ(shape->head_dim, 16);
  EXPECT_EQ(shape->sequence, 32);
}

TEST(ModelFlops, PalmFormulaForASmallGpt) {
  // N = 12 L h^2 + 13 L h + (V + T) h + 2h = 98,304 + 1,664 + 8,448 + 128 = 108,544 (models/gpt.cpp).
  // Per token (PaLM appendix B): 6N + 12 L H Q T = 651,264 + 12 x 2 x 4 x 16 x 32 = 651,264 + 49,152
  // = 700,416; per sample of T = 32 tokens: 22,413,312.
  ModelFlops flops = model_flops(small_gpt(8), 8, /*training=*/true, Recomputation::kNone);
  EXPECT_DOUBLE_EQ(flops.parameters, 108544);
  EXPECT_DOUBLE_EQ(flops.tokens_per_sample, 32);
  EXPECT_DOUBLE_EQ(flops.model_flops_per_sample, 22413312);
  EXPECT_DOUBLE_EQ(flops.hardware_flops_per_sample, 22413312);
  // The batch the graph is built for does not change a sample's FLOPs.
  EXPECT_DOUBLE_EQ(model_flops(small_gpt(3), 3, true, Recomputation::kNone).model_flops_per_sample, 22413312);
}

TEST(ModelFlops, RecomputationCountsInHardwareFlopsOnly) {
  // Full: one more forward, 2N + 4 L H Q T = 217,088 + 16,384 = 233,472 per token:
  // (700,416 + 233,472) x 32 = 29,884,416. Selective: the attention's 4 L H Q T = 16,384 per token:
  // (700,416 + 16,384) x 32 = 22,937,600.
  ModelFlops full = model_flops(small_gpt(8), 8, true, Recomputation::kFull);
  EXPECT_DOUBLE_EQ(full.model_flops_per_sample, 22413312);
  EXPECT_DOUBLE_EQ(full.hardware_flops_per_sample, 29884416);
  ModelFlops selective = model_flops(small_gpt(8), 8, true, Recomputation::kSelective);
  EXPECT_DOUBLE_EQ(selective.hardware_flops_per_sample, 22937600);
  // Inference: one forward, 233,472 x 32 = 7,471,104.
  EXPECT_DOUBLE_EQ(model_flops(small_gpt(8), 8, false, Recomputation::kNone).model_flops_per_sample, 7471104);
}

TEST(ModelFlops, GptTwoSmallPerToken) {
  // GPT-2 small: N = 124,439,808, L = 12, H = 12, Q = 64, T = 1024:
  // 6N + 12 L H Q T = 746,638,848 + 113,246,208 = 859,885,056 FLOPs per token.
  ModelFlops flops = model_flops(build_zoo_model("gpt", JsonReader(Json::object(), "test"), 1, 2), 1, true,
                                 Recomputation::kNone);
  EXPECT_DOUBLE_EQ(flops.parameters, 124439808);
  EXPECT_DOUBLE_EQ(flops.model_flops_per_sample / flops.tokens_per_sample, 859885056);
}

TEST(ModelFlops, Llama3EightBPerToken) {
  // Llama 3 8B: N = 8,030,261,248, L = 32, H = 32, Q = 128, T = 8192 (grouped-query attention
  // leaves the query heads' GEMMs whole): 6N + 12 L H Q T = 48,181,567,488 + 12,884,901,888
  // = 61,066,469,376 FLOPs per token.
  ModelFlops flops = model_flops(build_zoo_model("llama3_8b", JsonReader(Json::object(), "test"), 1, 2), 1, true,
                                 Recomputation::kNone);
  ASSERT_TRUE(flops.transformer.has_value());
  EXPECT_EQ(flops.transformer->layers, 32);
  EXPECT_EQ(flops.transformer->heads, 32);
  EXPECT_EQ(flops.transformer->head_dim, 128);
  EXPECT_DOUBLE_EQ(flops.model_flops_per_sample / flops.tokens_per_sample, 61066469376);
}

TEST(ModelFlops, OtherGraphsCountTheirOpsFlops) {
  OpGraph graph("mlp");
  Op op;
  op.name = "fc";
  op.kind = OpKind::kMatMul;
  op.type = "MatMul";
  op.forward_flops = 400;
  op.backward_flops = 800;
  graph.add_op(op);
  // (400 + 800) / 4 samples = 300 per sample; recomputation adds the forward: + 100.
  ModelFlops flops = model_flops(graph, 4, true, Recomputation::kFull);
  EXPECT_FALSE(flops.transformer.has_value());
  EXPECT_DOUBLE_EQ(flops.tokens_per_sample, 0);
  EXPECT_DOUBLE_EQ(flops.model_flops_per_sample, 300);
  EXPECT_DOUBLE_EQ(flops.hardware_flops_per_sample, 400);
}

TEST(TrainingEfficiency, MfuOfGptTwoSmallOnEightA100s) {
  // 8 A100s at 312 TFLOP/s (bf16 dense, NVIDIA A100 datasheet) training GPT-2 small at 1,000
  // samples/s (1,024,000 tokens/s): 1,000 x 1024 x 859,885,056 = 8.80522297e14 FLOP/s,
  // 110.065 TFLOP/s per GPU, MFU 8.80522297e14 / (8 x 312e12) = 35.2773%.
  TrainingEfficiency e;
  e.batch = {/*per_replica=*/32, /*micro_batches=*/4, /*replicas=*/8};
  e.devices = 8;
  e.peak_flops_per_second = 8 * 312e12;
  e.samples_per_second = 1000;
  e.tokens_per_sample = 1024;
  e.model_flops_per_sample = 1024.0 * 859885056;
  e.hardware_flops_per_sample = 1024.0 * (859885056 + 2.0 * 124439808 + 4.0 * 12 * 12 * 64 * 1024);
  EXPECT_DOUBLE_EQ(e.tokens_per_second(), 1024000);
  EXPECT_DOUBLE_EQ(e.tokens_per_day(), 1024000.0 * 86400);
  EXPECT_NEAR(e.model_flops_per_second_per_device(), 110.065287168e12, 1e3);
  EXPECT_NEAR(e.mfu(), 0.3527734, 1e-6);
  // HFU with full recomputation: + (2N + 4 L H Q T) = 248,879,616 + 37,748,736 per token:
  // 1,146,513,408 x 1,024,000 / 2.496e15 = 47.0364%.
  EXPECT_NEAR(e.hfu(), 0.4703645, 1e-6);
  // Global batch: 32 per replica x 8 replicas = 256 samples; micro-batch 32 / 4 = 8.
  EXPECT_EQ(e.batch.global(), 256);
  EXPECT_DOUBLE_EQ(e.batch.micro(), 8);
  Json json = efficiency_json(e);
  EXPECT_EQ(json.at("global_batch"), 256);
  EXPECT_EQ(json.at("global_batch_tokens"), 256.0 * 1024);
  EXPECT_NEAR(json.at("mfu").get<double>(), 0.3527734, 1e-6);
  std::string text = efficiency_text(e);
  EXPECT_NE(text.find("Global batch: 256 samples (32 per replica x 8 replicas; micro-batch 8 x 4 per replica)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("MFU 35.3%"), std::string::npos) << text;
}

TEST(BatchSizes, NamesPerReplicaMicroAndGlobalBatchForEveryStrategyKind) {
  RunOptions run;
  run.batch_size = 16;
  Strategy three_d;
  three_d.parallelism = ParallelismOptions{};
  three_d.parallelism->data = 2;
  three_d.parallelism->micro_batches = 4;
  BatchSizes b = batch_sizes(three_d, run);
  EXPECT_EQ(b.replicas, 2);  // not 1: data 2 is two replicas
  EXPECT_EQ(b.global(), 32);
  EXPECT_DOUBLE_EQ(b.micro(), 4);
  Strategy data_parallel;
  data_parallel.data_parallel = DataParallelOptions{};
  data_parallel.data_parallel->replicas = {0, 1, 2, 3};
  EXPECT_EQ(batch_sizes(data_parallel, run).global(), 64);
  Strategy pipeline;
  pipeline.pipeline = PipelineOptions{};
  pipeline.pipeline->micro_batches = 8;
  EXPECT_EQ(batch_sizes(pipeline, run).global(), 16);
  EXPECT_DOUBLE_EQ(batch_sizes(pipeline, run).micro(), 2);
  EXPECT_EQ(batch_sizes(Strategy{}, run).global(), 16);
}

}  // namespace
}  // namespace placesim
