// Specification of the model zoo: totals against published figures, the TensorFlow seed graph op
// by op, linear scaling with the batch, and parameter errors that name their JSON path.
#include "models/zoo.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace placesim {
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

TEST(ZooTest, FlopsAndActivationsScaleLinearlyWithBatch) {
  for (const std::string& name : zoo_model_names()) {
    if (name == "tf_add_variables") continue;  // inference graph of fixed tensors: no batch
    SCOPED_TRACE(name);
    const bool decoder = name == "gpt" || name.rfind("llama3", 0) == 0;
    const Json small = decoder ? Json{{"layers", 2}, {"sequence", 64}} : Json::object();
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
}  // namespace placesim
