// Specification of the model zoo: totals against published figures, the TensorFlow seed graph op
// by op, linear scaling with the batch, and parameter errors that name their JSON path.
#include "models/zoo.h"

#include "sim/core/input_error.h"
#include "sim/graph/model_flops.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace placesim {
namespace zoo_test {  // a unity batch holds several test files
namespace {

constexpr double kFloat32Bytes = 4;

OpGraph build(const std::string& name, const Json& parameters = Json::object(), int64_t batch_size = 1) {
  JsonReader reader(parameters, "scenario.json", "/model/parameters");
  return build_zoo_model(name, reader, batch_size, kFloat32Bytes);
}

// Multiply-accumulates of the convolutions and GEMMs: their forward FLOPs are exactly 2 x MACs.
double gemm_macs(const OpGraph& graph) {
  double macs = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (op.kind == OpKind::kConv || op.kind == OpKind::kMatMul) macs += op.forward_flops / 2;
  }
  return macs;
}

std::string thrown_message(const std::string& name, const Json& parameters) {
  try {
    build(name, parameters);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no InputError)";
}

struct Published {
  const char* model;
  double parameters;
  double gmacs_per_image;
};

// torchvision model metadata (num_params, _ops = GFLOPS as torchvision reports them, which are
// multiply-accumulates), https://pytorch.org/vision/stable/models.html:
//   AlexNet 61,100,840 / 0.71; VGG-16 138,357,544 / 15.47; ResNet-50 25,557,032 / 4.09;
//   ResNet-101 44,549,160 / 7.80; ResNet-152 60,192,808 / 11.51;
//   Inception v3 27,161,264 with the aux head / 5.71 at 299x299. The aux head (conv 768->128 1x1
//   + BN, conv 128->768 5x5 + BN, fc 768->1000) has 98,304 + 256 + 2,457,600 + 1,536 + 769,000
//   = 3,326,696 parameters, so the zoo's no-aux variant should have 23,834,568.
const Published kPublished[] = {
    {"alexnet", 61'100'840, 0.71},     {"vgg16", 138'357'544, 15.47},     {"resnet50", 25'557'032, 4.09},
    {"resnet101", 44'549'160, 7.80},   {"resnet152", 60'192'808, 11.51},  {"inception_v3", 23'834'568, 5.71},
};

TEST(ZooTest, CnnTotalsMatchPublishedFigures) {
  for (const Published& published : kPublished) {
    SCOPED_TRACE(published.model);
    OpGraph graph = build(published.model);
    EXPECT_NEAR(graph.totals().parameter_count, published.parameters, 0.01 * published.parameters);
    const double gmacs = gemm_macs(graph) / 1e9;
    EXPECT_NEAR(gmacs, published.gmacs_per_image, 0.03 * published.gmacs_per_image);
  }
}

TEST(ZooTest, MlpMatchesItsLayerWidths) {
  // Defaults 784 -> 1024 -> 1024 -> 10: weights + biases of each dense layer.
  const double parameters = (784.0 * 1024 + 1024) + (1024.0 * 1024 + 1024) + (1024.0 * 10 + 10);
  OpGraph graph = build("mlp");
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, parameters);
  EXPECT_DOUBLE_EQ(gemm_macs(graph), 784.0 * 1024 + 1024.0 * 1024 + 1024.0 * 10);

  OpGraph custom = build("mlp", {{"input", 10}, {"hidden", {20}}, {"output", 3}}, 5);
  EXPECT_DOUBLE_EQ(custom.totals().parameter_count, (10.0 * 20 + 20) + (20.0 * 3 + 3));
  EXPECT_DOUBLE_EQ(gemm_macs(custom), 5.0 * (10 * 20 + 20 * 3));
}

// Parameters of a GPT: per block 2 layer norms (4h), QKV (3h^2 + 3h), output projection
// (h^2 + h), MLP (4h^2 + 4h + 4h^2 + h) = 12h^2 + 13h; embeddings (V + S) h; final norm 2h.
double gpt_parameters(double layers, double hidden, double sequence, double vocabulary) {
  return 12 * layers * hidden * hidden + 13 * layers * hidden + (vocabulary + sequence) * hidden + 2 * hidden;
}

// Forward GEMM FLOPs: one third of Narayanan et al. (SC'21) 72 B s L h^2 (1 + s/(6h) + V/(12hL)).
double gpt_forward_flops(double batch, double layers, double hidden, double sequence, double vocabulary) {
  return 24 * batch * sequence * layers * hidden * hidden *
         (1 + sequence / (6 * hidden) + vocabulary / (12 * hidden * layers));
}

TEST(ZooTest, GptSmallMatchesPublishedParametersAndFlops) {
  // GPT-2 small: 124,439,808 parameters (Hugging Face "gpt2" checkpoint, tied lm_head).
  OpGraph graph = build("gpt", Json::object(), 2);
  EXPECT_DOUBLE_EQ(gpt_parameters(12, 768, 1024, 50257), 124'439'808);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, 124'439'808);

  const double expected = gpt_forward_flops(2, 12, 768, 1024, 50257);
  EXPECT_NEAR(2 * gemm_macs(graph), expected, 0.01 * expected);  // the formula counts only GEMMs
  EXPECT_NEAR(graph.totals().forward_flops, expected, 0.03 * expected);
  // Training = forward + backward = 3 x forward for the GEMMs (72 = 3 x 24).
  EXPECT_NEAR(graph.totals().forward_flops + graph.totals().backward_flops, 3 * expected, 0.03 * 3 * expected);
}

TEST(ZooTest, GptFollowsTheParameterFormulaForOtherShapes) {
  const Json parameters = {{"layers", 3}, {"hidden", 256}, {"heads", 8}, {"sequence", 128}, {"vocabulary", 1000}};
  OpGraph graph = build("gpt", parameters, 4);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, gpt_parameters(3, 256, 128, 1000));
  EXPECT_NEAR(2 * gemm_macs(graph), gpt_forward_flops(4, 3, 256, 128, 1000), 1e-9 * gemm_macs(graph));
}

// Megatron's dropouts on a 3-layer GPT: the embeddings' sum, each layer's attention probabilities
// and its two block outputs (3 L + 1 ops more); with "bias_dropout_fusion" each block output's
// dropout and residual add are one op (LayerBuilder::dropout_add), L + 1 ops more than without
// dropout. Neither changes the parameters or the forward FLOPs of separate dropout (1 per element
// each) and add (1).
TEST(ZooTest, GptFusesEachBlockOutputsDropoutWithItsResidualAdd) {
  const Json shape = {{"layers", 3}, {"hidden", 256}, {"heads", 8}, {"sequence", 128}, {"vocabulary", 1000}};
  Json separate = shape, fused = shape;
  separate["dropout"] = true;
  fused["dropout"] = true;
  fused["bias_dropout_fusion"] = true;
  const OpGraph plain = build("gpt", shape, 4), dropped = build("gpt", separate, 4), fusing = build("gpt", fused, 4);
  EXPECT_EQ(dropped.size(), plain.size() + 3 * 3 + 1);
  EXPECT_EQ(fusing.size(), plain.size() + 3 + 1);
  for (const char* name : {"h.0/attn_proj_dropout_add", "h.2/mlp_dropout_add", "h.1/attn_dropout", "embedding/dropout"}) {
    EXPECT_TRUE(fusing.contains(name)) << name;
  }
  for (const char* name : {"h.0/add_1", "h.0/attn_proj_dropout", "h.2/mlp_dropout"}) EXPECT_FALSE(fusing.contains(name)) << name;
  const OpId fused_add = fusing.find("h.1/mlp_dropout_add");
  EXPECT_EQ(fusing.op(fused_add).type, "DropoutAdd");
  EXPECT_EQ(fusing.op(fused_add).output_shape, (std::vector<int64_t>{4, 128, 256}));
  EXPECT_DOUBLE_EQ(fusing.totals().parameter_count, plain.totals().parameter_count);
  EXPECT_DOUBLE_EQ(fusing.totals().forward_flops, dropped.totals().forward_flops);
  Json alone = shape;
  alone["bias_dropout_fusion"] = true;
  EXPECT_NE(thrown_message("gpt", alone).find("/model/parameters/bias_dropout_fusion: fuses the hidden dropouts"),
            std::string::npos)
      << thrown_message("gpt", alone);
}

// Llama 3 (Grattafiori et al. 2024, table 3; Hugging Face Meta-Llama-3 configs), L layers, hidden h,
// head dim d, K key/value heads, FFN f, vocabulary V, untied embeddings:
//   L (2h + 2h^2 + 2 h K d + 3 h f) + 2 V h + h
double llama3_parameters(double layers, double hidden, double head_dim, double kv_heads, double ffn, double vocabulary) {
  return layers * (2 * hidden + 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim + 3 * hidden * ffn) +
         2 * vocabulary * hidden + hidden;
}

TEST(ZooTest, Llama3MatchesPublishedParameterCounts) {
  // Meta-Llama-3-8B: 8,030,261,248 parameters; Meta-Llama-3-70B: 70,553,706,496 (the safetensors
  // checkpoints' totals). Per block of 8B: 8,192 + 2 x 16,777,216 + 8,388,608 + 176,160,768.
  EXPECT_DOUBLE_EQ(llama3_parameters(32, 4096, 128, 8, 14336, 128256), 8'030'261'248);
  EXPECT_DOUBLE_EQ(llama3_parameters(80, 8192, 128, 8, 28672, 128256), 70'553'706'496);
  EXPECT_DOUBLE_EQ(build("llama3_8b", Json::object(), 1).totals().parameter_count, 8'030'261'248);
  EXPECT_DOUBLE_EQ(build("llama3_70b", Json::object(), 1).totals().parameter_count, 70'553'706'496);
}

TEST(ZooTest, Llama3GroupedQueryAttentionProjectsFewerKeysAndValues) {
  // 8 heads of 32 sharing 2 KV heads: the fused projection is h + 2 K d = 256 + 2 x 2 x 32 = 384 wide.
  const Json parameters = {{"layers", 1}, {"hidden", 256}, {"heads", 8}, {"kv_heads", 2}, {"ffn", 512},
                           {"sequence", 16}, {"vocabulary", 100}};
  OpGraph graph = build("llama3_8b", parameters, 2);
  const Op& qkv = graph.op(graph.find("h.0/qkv"));
  EXPECT_EQ(qkv.output_shape, (std::vector<int64_t>{2, 16, 384}));
  EXPECT_DOUBLE_EQ(qkv.parameter_count, 256.0 * 384);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, llama3_parameters(1, 256, 32, 2, 512, 100));
  // SwiGLU halves the fused gate and up projection, 2f -> f.
  EXPECT_EQ(graph.op(graph.find("h.0/swiglu")).output_shape, (std::vector<int64_t>{2, 16, 512}));
}

TEST(ZooTest, Llama3405bMatchesTheParameterFormula) {
  // Llama 3 405B (Grattafiori et al. 2024, table 3: 126 layers, hidden 16384, 128 heads of 128,
  // 8 KV heads, FFN 53248, vocabulary 128256). Per block:
  //   2h 32,768 + 2h^2 536,870,912 + 2hKd 33,554,432 + 3hf 2,617,245,696 = 3,187,703,808;
  //   126 blocks 401,650,679,808 + embedding and head 2Vh 4,202,692,608 + final norm 16,384
  //   = 405,853,388,800 ("405B").
  EXPECT_DOUBLE_EQ(llama3_parameters(126, 16384, 128, 8, 53248, 128256), 405'853'388'800);
  EXPECT_DOUBLE_EQ(build("llama3_405b", Json::object(), 1).totals().parameter_count, 405'853'388'800);
  const Json small = {{"layers", 2}, {"hidden", 512}, {"heads", 16}, {"kv_heads", 4}, {"ffn", 1024},
                      {"vocabulary", 1000}, {"sequence", 32}};
  EXPECT_DOUBLE_EQ(build("llama3_405b", small, 1).totals().parameter_count,
                   llama3_parameters(2, 512, 32, 4, 1024, 1000));
}

// Mixtral 8x7B (Jiang et al. 2024, table 1; Hugging Face Mixtral-8x7B-v0.1: 46,702,792,704
// parameters). Per block: 2h 8,192 + Q, O 2h^2 33,554,432 + K, V 2hKd 8,388,608 + router hE 32,768
// + experts 3Ehf 1,409,286,144 = 1,451,270,144; 32 blocks + 2Vh 262,144,000 + h 4,096.
// Active per token (2 of 8 experts): 32 x (1,451,270,144 - 6 x 176,160,768) + 262,148,096
// = 12,879,925,248 ("13B active").
TEST(ZooTest, MixtralMatchesPublishedParameterCounts) {
  const OpGraph graph = build("mixtral_8x7b", Json::object(), 1);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, 46'702'792'704);
  // 4096 tokens, top 2 of 8 experts: each expert takes 1,024 rows per sample.
  const Op& fc = graph.op(graph.find("h.0/expert_3/mlp_fc"));
  ASSERT_TRUE(fc.kernel);
  EXPECT_EQ(fc.kernel->gemm.m, 1024);
  EXPECT_EQ(fc.kernel->gemm.n, 2 * 14336);
  const ModelFlops flops = model_flops(graph, 1, true, Recomputation::kNone);
  EXPECT_DOUBLE_EQ(flops.parameters, 46'702'792'704);
  EXPECT_DOUBLE_EQ(flops.active_parameters, 12'879'925'248);
  // PaLM: 6 N_active + 12 L H Q T per token = 6 x 12,879,925,248 + 12 x 32 x 32 x 128 x 4096.
  EXPECT_DOUBLE_EQ(flops.model_flops_per_sample, (6.0 * 12'879'925'248 + 12.0 * 32 * 32 * 128 * 4096) * 4096);
}

// A capacity factor pads each expert to ceil(cf x k x S / E) rows: 1.25 x 2 x 100 / 8 = 31.25 -> 32;
// the experts' GEMM work is the rows they take, so it grows with the padding.
TEST(ZooTest, MixtralCapacityFactorPadsEachExpert) {
  const Json small = {{"layers", 1}, {"hidden", 64}, {"heads", 4}, {"kv_heads", 2}, {"ffn", 128},
                      {"vocabulary", 50}, {"sequence", 100}, {"capacity_factor", 1.25}};
  const OpGraph graph = build("mixtral_8x7b", small, 2);
  const Op& fc = graph.op(graph.find("h.0/expert_0/mlp_fc"));
  EXPECT_EQ(fc.output_shape, (std::vector<int64_t>{2, 32, 256}));
  EXPECT_DOUBLE_EQ(fc.forward_flops, 2.0 * 2 * 32 * 64 * 256);
  const Json dropless = {{"layers", 1}, {"hidden", 64}, {"heads", 4}, {"kv_heads", 2}, {"ffn", 128},
                         {"vocabulary", 50}, {"sequence", 100}};
  const OpGraph balanced = build("mixtral_8x7b", dropless, 2);  // 2 x 100 / 8 = 25 rows
  EXPECT_EQ(balanced.op(balanced.find("h.0/expert_0/mlp_fc")).output_shape, (std::vector<int64_t>{2, 25, 256}));
  const Json bad = {{"top_k", 9}};
  EXPECT_THROW(build("mixtral_8x7b", bad, 1), InputError);
}

// Dropless routing with imbalance f = 2: k S = 2 x 100 = 200 rows routed per sample; expert 0
// takes ceil(2 x 200 / 8) = 50, the other seven ceil((200 - 50) / 7) = ceil(21.43) = 22 each.
// f above E / k = 4 (more than every token) and f with a padding capacity factor are refused.
TEST(ZooTest, MixtralRouterImbalanceLoadsTheFirstExpert) {
  Json small = {{"layers", 1}, {"hidden", 64}, {"heads", 4}, {"kv_heads", 2}, {"ffn", 128},
                {"vocabulary", 50}, {"sequence", 100}, {"router_imbalance", 2.0}};
  const OpGraph graph = build("mixtral_8x7b", small, 2);
  EXPECT_EQ(graph.op(graph.find("h.0/expert_0/mlp_fc")).output_shape, (std::vector<int64_t>{2, 50, 256}));
  for (int e = 1; e < 8; ++e) {
    EXPECT_EQ(graph.op(graph.find("h.0/expert_" + std::to_string(e) + "/mlp_fc")).output_shape,
              (std::vector<int64_t>{2, 22, 256}));
  }
  small["router_imbalance"] = 4.5;
  EXPECT_THROW(build("mixtral_8x7b", small, 1), InputError);
  small["router_imbalance"] = 1.5;
  small["capacity_factor"] = 1.25;
  EXPECT_THROW(build("mixtral_8x7b", small, 1), InputError);
}

// BERT pre-training as Hugging Face's BertForPreTraining (models/bert.cpp), L layers, hidden h,
// FFN f, vocabulary V, P positions, 2 token types:
//   embeddings (V + P + 2) h + 2h; per block 4h^2 + 2hf + 9h + f; pooler h^2 + h;
//   MLM head h^2 + h + 2h + V (decoder weights tied); NSP 2h + 2.
double bert_encoder_parameters(double layers, double hidden, double ffn, double vocabulary, double positions) {
  return (vocabulary + positions + 2) * hidden + 2 * hidden +
         layers * (4 * hidden * hidden + 2 * hidden * ffn + 9 * hidden + ffn) + hidden * hidden + hidden;
}
double bert_parameters(double layers, double hidden, double ffn, double vocabulary, double positions) {
  return bert_encoder_parameters(layers, hidden, ffn, vocabulary, positions) + hidden * hidden + 3 * hidden +
         vocabulary + 2 * hidden + 2;
}

TEST(ZooTest, BertMatchesHuggingFaceParameterCounts) {
  // bert-large-uncased: embeddings 31,782,912 + 24 x 12,596,224 + pooler 1,049,600 = 335,141,888
  // (Hugging Face BertModel; Devlin et al. "340M"); + MLM head 1,082,170 + NSP 2,050 = 336,226,108.
  // bert-base-uncased: 23,837,184 + 12 x 7,087,872 + 590,592 = 109,482,240 ("110M");
  // + 622,650 + 1,538 = 110,106,428.
  EXPECT_DOUBLE_EQ(bert_encoder_parameters(24, 1024, 4096, 30522, 512), 335'141'888);
  EXPECT_DOUBLE_EQ(bert_parameters(24, 1024, 4096, 30522, 512), 336'226'108);
  EXPECT_DOUBLE_EQ(bert_encoder_parameters(12, 768, 3072, 30522, 512), 109'482'240);
  EXPECT_DOUBLE_EQ(bert_parameters(12, 768, 3072, 30522, 512), 110'106'428);
  EXPECT_DOUBLE_EQ(build("bert_large").totals().parameter_count, 336'226'108);
  EXPECT_DOUBLE_EQ(build("bert_base").totals().parameter_count, 110'106'428);

  // Phase-1 pre-training's 128-token sequences keep the 512 position embeddings.
  OpGraph short_sequences = build("bert_large", {{"sequence", 128}}, 2);
  EXPECT_DOUBLE_EQ(short_sequences.totals().parameter_count, 336'226'108);
  const Json custom = {{"layers", 3}, {"hidden", 64}, {"heads", 4}, {"ffn", 100}, {"sequence", 16},
                       {"positions", 20}, {"vocabulary", 500}};
  EXPECT_DOUBLE_EQ(build("bert_base", custom, 3).totals().parameter_count, bert_parameters(3, 64, 100, 500, 20));
}

TEST(ZooTest, BertLayerForwardFlopsByHand) {
  // One encoder block, B = 2, S = 4 (R = 8 rows), h = 8 in 2 heads of 4, f = 16:
  //   qkv 2 R h 3h = 3,072; scores 2 B a S^2 (h/a) = 512; softmax 5 B a S^2 = 320;
  //   context 2 B S h S = 512; attn_proj 2 R h^2 = 1,024; add 1 R h = 64; ln 5 R h = 320;
  //   mlp_fc 2 R h f = 2,048; gelu R f = 128; mlp_proj 2,048; add 64; ln 320   -> 10,432.
  const Json tiny = {{"layers", 1}, {"hidden", 8}, {"heads", 2}, {"ffn", 16}, {"sequence", 4}, {"vocabulary", 10}};
  OpGraph graph = build("bert_base", tiny, 2);
  double layer_flops = 0;
  int layer_ops = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).layer == "layer.0") {
      layer_flops += graph.op(id).forward_flops;
      ++layer_ops;
    }
  }
  EXPECT_EQ(layer_ops, 12);
  EXPECT_DOUBLE_EQ(layer_flops, 3072 + 512 + 320 + 512 + 1024 + 64 + 320 + 2048 + 128 + 2048 + 64 + 320);
  // The MLM decoder: 2 R h V with the tied word embedding, plus its V-wide bias.
  EXPECT_DOUBLE_EQ(graph.op(graph.find("lm_head/MatMul")).forward_flops, 2.0 * 8 * 8 * 10);
  EXPECT_DOUBLE_EQ(graph.op(graph.find("lm_head/MatMul")).parameter_count, 0);
  EXPECT_DOUBLE_EQ(graph.op(graph.find("lm_head/bias")).parameter_count, 10);

  // NVIDIA's gathered head: P = 3 of the S = 4 positions (R = 6 rows) through the transform
  // (2 R h^2 = 768) and the decoder (2 R h V = 960); the gather reads and writes R h = 48 values.
  Json gathered = tiny;
  gathered["masked_positions"] = 3;
  OpGraph masked = build("bert_base", gathered, 2);
  EXPECT_DOUBLE_EQ(masked.op(masked.find("lm_head/MatMul")).forward_flops, 2.0 * 6 * 8 * 10);
  EXPECT_DOUBLE_EQ(masked.op(masked.find("mlm/transform")).forward_flops, 2.0 * 6 * 8 * 8);
  EXPECT_DOUBLE_EQ(masked.op(masked.find("mlm/masked")).forward_bytes, 2.0 * 6 * 8 * 4);
  EXPECT_DOUBLE_EQ(masked.totals().parameter_count, graph.totals().parameter_count);
  Json too_many = tiny;
  too_many["masked_positions"] = 5;
  EXPECT_THROW(build("bert_base", too_many, 2), InputError);

  // Training's dropouts: on the probabilities (B a S^2 = 64 elements) and on the two block
  // outputs (R h = 64 each), one FLOP per element; plus one after the embeddings.
  Json with_dropout = tiny;
  with_dropout["dropout"] = true;
  OpGraph dropped = build("bert_base", with_dropout, 2);
  EXPECT_EQ(dropped.size(), graph.size() + 4);
  EXPECT_DOUBLE_EQ(dropped.op(dropped.find("layer.0/attn_dropout")).forward_flops, 64);
  EXPECT_DOUBLE_EQ(dropped.op(dropped.find("layer.0/mlp_dropout")).forward_flops, 64);
  EXPECT_DOUBLE_EQ(dropped.totals().parameter_count, graph.totals().parameter_count);
}

// Vaswani et al. 2017 (models/transformer.cpp), L layers per stack, d_model h, FFN f, vocabulary V,
// one shared embedding: V h + L (4h^2 + 4h + 2hf + f + h + 4h) + L (8h^2 + 8h + 2hf + f + h + 6h).
double transformer_parameters(double layers, double hidden, double ffn, double vocabulary) {
  const double attention = 4 * hidden * hidden + 4 * hidden, mlp = 2 * hidden * ffn + ffn + hidden;
  return vocabulary * hidden + layers * (attention + mlp + 4 * hidden) + layers * (2 * attention + mlp + 6 * hidden);
}

TEST(ZooTest, TransformerMatchesVaswaniTable3) {
  // base: 18,944,000 + 6 x 3,152,384 + 6 x 4,204,032 = 63,082,496 (table 3: 65M);
  // big: 37,888,000 + 6 x 12,596,224 + 6 x 16,796,672 = 214,245,376 (table 3: 213M).
  EXPECT_DOUBLE_EQ(transformer_parameters(6, 512, 2048, 37000), 63'082'496);
  EXPECT_DOUBLE_EQ(transformer_parameters(6, 1024, 4096, 37000), 214'245'376);
  const double base = build("transformer_base").totals().parameter_count;
  const double big = build("transformer_big").totals().parameter_count;
  EXPECT_DOUBLE_EQ(base, 63'082'496);
  EXPECT_DOUBLE_EQ(big, 214'245'376);
  EXPECT_NEAR(base, 65e6, 0.03 * 65e6);  // the paper's figures are rounded and of unstated scope
  EXPECT_NEAR(big, 213e6, 0.01 * 213e6);

  const Json custom = {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"ffn", 96}, {"vocabulary", 300},
                       {"source_sequence", 12}, {"target_sequence", 7}};
  OpGraph graph = build("transformer_big", custom, 3);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, transformer_parameters(2, 64, 96, 300));
  // Cross-attention: 7 target queries on 12 source keys in 4 heads of 16.
  const Op& cross = graph.op(graph.find("dec.1/cross_scores"));
  EXPECT_EQ(cross.output_shape, (std::vector<int64_t>{3, 4, 7, 12}));
  EXPECT_DOUBLE_EQ(cross.forward_flops, 2.0 * 3 * 4 * 7 * 12 * 16);
  EXPECT_EQ(graph.op(graph.find("loss/xent")).output_shape, (std::vector<int64_t>{3, 7}));
}

// T5 v1.0 (models/t5.cpp), L layers per stack, d_model h, heads a, FFN f, vocabulary V, 32 buckets:
//   V h + L (4h^2 + 2hf + 2h) + L (8h^2 + 2hf + 3h) + 2 x 32 a + 2h.
double t5_parameters(double layers, double hidden, double heads, double ffn, double vocabulary) {
  return vocabulary * hidden + layers * (4 * hidden * hidden + 2 * hidden * ffn + 2 * hidden) +
         layers * (8 * hidden * hidden + 2 * hidden * ffn + 3 * hidden) + 2 * 32 * heads + 2 * hidden;
}

TEST(ZooTest, T5BaseMatchesTheHuggingFaceCheckpoint) {
  // t5-base: 24,674,304 + 12 x 7,079,424 + 12 x 9,439,488 + 768 + 1,536 = 222,903,552
  // (Raffel et al. 2020: "220 million").
  EXPECT_DOUBLE_EQ(t5_parameters(12, 768, 12, 3072, 32128), 222'903'552);
  EXPECT_DOUBLE_EQ(build("t5_base").totals().parameter_count, 222'903'552);
  const Json custom = {{"layers", 3}, {"hidden", 64}, {"heads", 8}, {"ffn", 128}, {"vocabulary", 200},
                       {"source_sequence", 20}, {"target_sequence", 6}};
  OpGraph graph = build("t5_base", custom, 2);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, t5_parameters(3, 64, 8, 128, 200));
  // Only the first self-attention of each stack owns the relative position table (32 x 8).
  EXPECT_DOUBLE_EQ(graph.op(graph.find("enc.0/position_bias")).parameter_count, 32.0 * 8);
  EXPECT_DOUBLE_EQ(graph.op(graph.find("enc.2/position_bias")).parameter_count, 0);
  EXPECT_DOUBLE_EQ(graph.op(graph.find("dec.0/position_bias")).parameter_count, 32.0 * 8);
}

// GNMT as MLPerf's reference (models/gnmt.cpp), L layers per stack, hidden h, vocabulary V;
// LSTM(in -> h) = 4h (in + h) + 8h:
//   V h + 2 LSTM(h) + LSTM(2h) + (L - 2) LSTM(h) + LSTM(h) + 2h^2 + 2h + 1 + (L - 1) LSTM(2h) + hV + V.
double gnmt_parameters(double layers, double hidden, double vocabulary) {
  auto lstm = [hidden](double in) { return 4 * hidden * (in + hidden) + 8 * hidden; };
  return vocabulary * hidden + 2 * lstm(hidden) + lstm(2 * hidden) + (layers - 2) * lstm(hidden) + lstm(hidden) +
         2 * hidden * hidden + 2 * hidden + 1 + (layers - 1) * lstm(2 * hidden) + hidden * vocabulary + vocabulary;
}

TEST(ZooTest, GnmtMatchesMlperfParameterCount) {
  // 33,095,680 + encoder 46,178,304 + decoder 8,396,800 + 2,099,201 + 37,773,312 + 33,128,000
  // = 160,671,297: "MLPerf GNMT has 160671297 parameters" (NVIDIA apex distributed-optimizer tests).
  EXPECT_DOUBLE_EQ(gnmt_parameters(4, 1024, 32320), 160'671'297);
  EXPECT_DOUBLE_EQ(build("gnmt").totals().parameter_count, 160'671'297);
  const Json custom = {{"layers", 3}, {"hidden", 32}, {"vocabulary", 100}, {"source_sequence", 6},
                       {"target_sequence", 4}};
  OpGraph graph = build("gnmt", custom, 2);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, gnmt_parameters(3, 32, 100));
  // Every LSTM runs one recurrent GEMM per step: 4 encoder LSTMs (two directions, then 2 layers)
  // x 6 source steps + 3 decoder LSTMs x 4 target steps.
  int recurrent_gemms = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    if (graph.op(id).name.find("/step_") != std::string::npos) ++recurrent_gemms;
  }
  EXPECT_EQ(recurrent_gemms, 4 * 6 + 3 * 4);
  EXPECT_EQ(graph.op(graph.find("attention/context")).output_shape, (std::vector<int64_t>{2, 4, 32}));
}

// AmoebaNet-D (L, D) at the GPipe paper's sizes (Huang et al. 2019, table 1: 82M, 318M, 542M,
// 1.05B, 1.8B), as torchgpipe's memory benchmark counts them (81.5M, 319.0M, 542.7M, 1.06B,
// 1.84B), from the architecture by hand (models/amoebanet.cpp): batch norm 2 per channel; RCB(in
// -> out) = ReLU-1x1-BN = in out + 2 out; a factorized reduction FR(in -> out) = 2 in out/2 + 2 out;
// a bottleneck through c/4 channels = c c/4 (down) + taps (c/4)^2 (3x3: 9 taps in 1 convolution;
// 1x7 then 7x1: 14 in 2) + c/4 c (up) + its batch norms. Each cell brings prev to c (RCB) and
// prev_prev (FR after a reduction, RCB when its channels differ, else nothing); a normal cell's
// operations hold 3 conv 1x1 (c^2 + 2c) and 2 conv 1x7-7x1, a reduction cell's a conv 3x3, a conv
// 1x7-7x1 and a conv 1x1 (its "none" read added states: identities); pools hold none. Normal cells
// output 4c channels, reduction cells 3c; the classifier is cp x classes + classes.
double amoebanet_parameters(int64_t layers, int64_t filters, int64_t classes) {
  auto bn = [](double c) { return 2 * c; };
  auto rcb = [&](double in, double out) { return in * out + bn(out); };
  auto fr = [&](double in, double out) { return 2 * in * (out / 2) + bn(out); };
  auto bottleneck = [&](double c, double taps, double spatial_convs) {
    return c * (c / 4) + taps * (c / 4) * (c / 4) + (c / 4) * c + (1 + spatial_convs) * bn(c / 4) + bn(c);
  };
  double c = static_cast<double>(filters) / 4, cp = c, cpp = c, total = 3 * c * 9 + bn(c);  // the stem's 3x3
  bool reduction_prev = false;
  auto add_cell = [&](bool reduction) {
    if (reduction) c *= 2;
    total += rcb(cp, c) + (reduction_prev ? fr(cpp, c) : cpp != c ? rcb(cpp, c) : 0);
    total += reduction ? bottleneck(c, 9, 1) + bottleneck(c, 14, 2) + rcb(c, c)
                       : 3 * rcb(c, c) + 2 * bottleneck(c, 14, 2);
    cpp = cp;
    cp = c * (reduction ? 3 : 4);
    reduction_prev = reduction;
  };
  add_cell(true);  // the stem's two reduction cells
  add_cell(true);
  for (int group = 0; group < 3; ++group) {
    for (int64_t i = 0; i < layers / 3; ++i) add_cell(false);
    if (group < 2) add_cell(true);
  }
  return total + cp * static_cast<double>(classes) + static_cast<double>(classes);
}

TEST(ZooTest, AmoebaNetDMatchesTheGpipePapersParameterCounts) {
  struct Size {
    int64_t layers, filters;
    double parameters;
  };
  for (const Size& size : {Size{18, 208, 81'505'540}, Size{18, 416, 319'024'120}, Size{18, 544, 542'734'840},
                           Size{36, 544, 1'055'832'376}, Size{72, 512, 1'844'858'344}}) {
    SCOPED_TRACE(std::to_string(size.layers) + ", " + std::to_string(size.filters));
    EXPECT_DOUBLE_EQ(amoebanet_parameters(size.layers, size.filters, 1000), size.parameters);
    const OpGraph graph = build("amoebanet_d", {{"layers", size.layers}, {"filters", size.filters}});
    EXPECT_DOUBLE_EQ(graph.totals().parameter_count, size.parameters);
  }
  // The default is the GPipe speed benchmark's (18, 256); a small one with 10 classes.
  EXPECT_DOUBLE_EQ(build("amoebanet_d").totals().parameter_count, amoebanet_parameters(18, 256, 1000));
  EXPECT_DOUBLE_EQ(build("amoebanet_d", {{"layers", 3}, {"filters", 8}, {"num_classes", 10}}).totals().parameter_count,
                   amoebanet_parameters(3, 8, 10));
  // 224 x 224 images: 112 after the stem, halved by each of the four reduction cells to 7.
  const OpGraph graph = build("amoebanet_d", {{"layers", 3}, {"filters", 8}}, 2);
  EXPECT_EQ(graph.op(graph.find("cell5_normal1/concat")).output_shape, (std::vector<int64_t>{2, 4 * 32, 7, 7}));
}

TEST(ZooTest, FlopsAndActivationsScaleLinearlyWithBatch) {
  for (const std::string& name : zoo_model_names()) {
    if (name == "tf_add_variables") continue;  // inference graph of fixed tensors: no batch
    SCOPED_TRACE(name);
    const bool one_sequence = name == "gpt" || name.rfind("llama3", 0) == 0 || name.rfind("bert", 0) == 0;
    const bool two_sequences = name.rfind("transformer", 0) == 0 || name == "t5_base" || name == "gnmt";
    const Json small = one_sequence    ? Json{{"layers", 2}, {"sequence", 64}}
                       : two_sequences ? Json{{"layers", 2}, {"source_sequence", 16}, {"target_sequence", 8}}
                                       : Json::object();
    GraphTotals one = build(name, small, 1).totals();
    GraphTotals three = build(name, small, 3).totals();
    EXPECT_DOUBLE_EQ(three.forward_flops, 3 * one.forward_flops);
    EXPECT_DOUBLE_EQ(three.backward_flops, 3 * one.backward_flops);
    EXPECT_DOUBLE_EQ(three.activation_bytes, 3 * one.activation_bytes);
    EXPECT_DOUBLE_EQ(three.parameter_count, one.parameter_count);
    EXPECT_EQ(three.ops, one.ops);
  }
}

TEST(ZooTest, EveryGraphIsAcyclicLabelledAndEndsInItsLoss) {
  for (const std::string& name : zoo_model_names()) {
    SCOPED_TRACE(name);
    OpGraph graph = build(name);
    EXPECT_EQ(graph.name(), name);
    std::vector<OpId> order;
    std::vector<std::string> cycle;
    EXPECT_TRUE(graph.topological_order(&order, &cycle));
    EXPECT_EQ(order.size(), graph.size());
    for (OpId id = 0; id < graph.size(); ++id) {
      const Op& op = graph.op(id);
      EXPECT_FALSE(op.type.empty()) << op.name;
      EXPECT_FALSE(op.layer.empty()) << op.name;
      EXPECT_GE(op.forward_flops, 0) << op.name;
      if (op.type != "Placeholder") {
        EXPECT_DOUBLE_EQ(op.dtype_bytes, kFloat32Bytes) << op.name;
      }
    }
    if (name != "tf_add_variables") {
      const Op& last = graph.op(graph.size() - 1);
      EXPECT_EQ(last.type, "SparseSoftmaxCrossEntropyWithLogits");
      EXPECT_TRUE(graph.outputs(graph.size() - 1).empty());
    }
  }
}

TEST(ZooTest, SeedGraphHasExactlyTheTensorFlowOpsAndEdges) {
  // shape [1024, 1024] of float32: 4 MiB per tensor.
  OpGraph graph = build("tf_add_variables");
  const double elements = 1024.0 * 1024, tensor_bytes = elements * kFloat32Bytes;
  struct Expected {
    const char* name;
    const char* type;
    OpKind kind;
    const char* colocate_with;
    double output_bytes;
    double forward_bytes;
    double parameters;
  };
  // TensorFlow's creation (GraphDef) order: each variable's initial value, the variable, its
  // Assign and its read; then the add and the initializer.
  const Expected expected[] = {
      {"Const", "Const", OpKind::kVariable, "", tensor_bytes, 0, 0},
      {"a", "VariableV2", OpKind::kVariable, "", tensor_bytes, 0, elements},
      {"a/Assign", "Assign", OpKind::kDataMovement, "a", 0, 2 * tensor_bytes, 0},
      {"a/read", "Identity", OpKind::kDataMovement, "a", tensor_bytes, 0, 0},
      {"Const_1", "Const", OpKind::kVariable, "", tensor_bytes, 0, 0},
      {"b", "VariableV2", OpKind::kVariable, "", tensor_bytes, 0, elements},
      {"b/Assign", "Assign", OpKind::kDataMovement, "b", 0, 2 * tensor_bytes, 0},
      {"b/read", "Identity", OpKind::kDataMovement, "b", tensor_bytes, 0, 0},
      {"add", "Add", OpKind::kElementwise, "", tensor_bytes, 3 * tensor_bytes, 0},
      {"init", "NoOp", OpKind::kNoOp, "", 0, 0, 0},
  };
  ASSERT_EQ(graph.size(), std::size(expected));
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    SCOPED_TRACE(op.name);
    EXPECT_EQ(op.name, expected[id].name);
    EXPECT_EQ(op.type, expected[id].type);
    EXPECT_EQ(op.kind, expected[id].kind);
    EXPECT_EQ(op.colocate_with, expected[id].colocate_with);
    EXPECT_DOUBLE_EQ(op.output_bytes, expected[id].output_bytes);
    EXPECT_DOUBLE_EQ(op.forward_bytes, expected[id].forward_bytes);
    EXPECT_DOUBLE_EQ(op.parameter_count, expected[id].parameters);
    EXPECT_DOUBLE_EQ(op.forward_flops, op.name == std::string("add") ? elements : 0);
    EXPECT_DOUBLE_EQ(op.backward_flops, 0);
    EXPECT_DOUBLE_EQ(op.backward_bytes, 0);
  }

  struct Edge {
    std::string from, to;
    bool control;
    bool operator==(const Edge&) const = default;
  };
  std::vector<Edge> edges;
  for (OpId id = 0; id < graph.size(); ++id) {
    for (const auto& consumer : graph.outputs(id)) {
      edges.push_back({graph.op(id).name, graph.op(consumer.op).name, consumer.edge.control});
      EXPECT_DOUBLE_EQ(consumer.edge.bytes, consumer.edge.control ? 0 : graph.op(id).output_bytes);
    }
  }
  const std::vector<Edge> expected_edges{
      {"Const", "a/Assign", false},   {"a", "a/Assign", false},       {"a", "a/read", false},
      {"a/Assign", "init", true},     {"a/read", "add", false},       {"Const_1", "b/Assign", false},
      {"b", "b/Assign", false},       {"b", "b/read", false},         {"b/Assign", "init", true},
      {"b/read", "add", false},
  };
  EXPECT_EQ(edges, expected_edges);  // grouped by producer, in insertion order
}

TEST(ZooTest, SeedShapeParameter) {
  OpGraph graph = build("tf_add_variables", {{"shape", {3, 5}}});
  EXPECT_EQ(graph.op(graph.find("add")).output_shape, (std::vector<int64_t>{3, 5}));
  EXPECT_DOUBLE_EQ(graph.op(graph.find("add")).forward_flops, 15);
  EXPECT_DOUBLE_EQ(graph.totals().parameter_count, 30);
}

TEST(ZooTest, BadParametersNameTheirJsonPath) {
  auto expect_error = [](const std::string& name, const Json& parameters, const std::string& fragment) {
    std::string message = thrown_message(name, parameters);
    EXPECT_NE(message.find(fragment), std::string::npos) << name << " " << parameters.dump() << ": " << message;
  };
  expect_error("gpt", {{"layers", -1}}, "scenario.json: /model/parameters/layers: expected a positive integer");
  expect_error("gpt", {{"layer", 2}}, "/model/parameters/layer: unknown key \"layer\" (did you mean \"layers\"?)");
  expect_error("gpt", {{"hidden", 100}, {"heads", 12}}, "/model/parameters/heads: the hidden size 100");
  expect_error("gpt", {{"sequence", "long"}}, "/model/parameters/sequence");
  expect_error("mlp", {{"hidden", {64, 0}}}, "/model/parameters/hidden/1: expected a positive integer");
  expect_error("mlp", {{"hidden", 64}}, "/model/parameters/hidden: expected an array");
  expect_error("resnet50", {{"num_classes", 0}}, "/model/parameters/num_classes");
  expect_error("resnet50", {{"image_sise", 0}}, "did you mean \"image_size\"");
  expect_error("tf_add_variables", {{"shape", {1024, -2}}}, "/model/parameters/shape/1");
  // An image too small for the kernels is reported at "image_size".
  expect_error("alexnet", {{"image_size", 16}}, "/model/parameters/image_size: cannot build zoo model \"alexnet\"");
  expect_error("inception_v3", {{"image_size", 32}}, "/model/parameters/image_size");
  expect_error("vgg16", Json::array(), "/model/parameters: expected an object");
  expect_error("llama3_405b", {{"kv_heads", 7}}, "/model/parameters/kv_heads: 128 heads are not a multiple of 7");
  expect_error("bert_large", {{"sequence", 1024}}, "/model/parameters/sequence: 1024 tokens do not fit the 512");
  expect_error("bert_base", {{"ffn", 0}}, "/model/parameters/ffn: expected a positive integer");
  expect_error("transformer_base", {{"sequence", 64}}, "/model/parameters/sequence: unknown key");
  expect_error("transformer_big", {{"source_sequence", 0}}, "/model/parameters/source_sequence");
  // Without "heads", a hidden size that the default heads do not divide is reported at "hidden".
  expect_error("t5_base", {{"hidden", 100}}, "/model/parameters/hidden: the hidden size 100 is not divisible by 12");
  expect_error("t5_base", {{"target_sequence", "short"}}, "/model/parameters/target_sequence");
  expect_error("gnmt", {{"layers", 1}}, "/model/parameters/layers");
  expect_error("gnmt", {{"heads", 8}}, "/model/parameters/heads: unknown key");
  expect_error("amoebanet_d", {{"layers", 20}}, "/model/parameters/layers: AmoebaNet-D's normal cells come in three");
  expect_error("amoebanet_d", {{"filters", 100}}, "/model/parameters/filters:");
  expect_error("amoebanet_d", {{"image_size", 100}}, "/model/parameters/image_size: cannot build zoo model");
}

TEST(ZooTest, NullParametersMeanDefaults) {
  EXPECT_DOUBLE_EQ(build("resnet50", Json()).totals().parameter_count, 25'557'032);
}

TEST(ZooTest, UnknownModelNameListsTheZoo) {
  const Json document = {{"model", {{"zoo", "resnet5"}, {"parameters", Json::object()}}}};
  JsonReader root(document, "scenario.json");
  JsonReader model = root.at("model");
  try {
    build_zoo_model(model.at("zoo"), model.at("parameters"), 1, kFloat32Bytes);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/model/zoo");
    std::string message = error.what();
    EXPECT_NE(message.find("unknown zoo model \"resnet5\" (did you mean \"resnet50\"?)"), std::string::npos) << message;
    EXPECT_NE(message.find("available: tf_add_variables, mlp, alexnet"), std::string::npos) << message;
  }
  EXPECT_THROW(build("no_such_model"), InputError);
}

}  // namespace
}  // namespace zoo_test
}  // namespace placesim
