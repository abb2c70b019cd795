// mlp: a multi-layer perceptron (MNIST-style by default: 784 -> 1024 -> 1024 -> 10) with ReLU
// after each hidden layer and a softmax cross-entropy loss.
#include <string>
#include <vector>

#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {
namespace {

constexpr int64_t kMaxWidth = 1 << 24;
constexpr size_t kMaxHiddenLayers = 10000;

}  // namespace

OpGraph build_mlp(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys({"input", "hidden", "output"});
  const int64_t input_width = parameters.integer_or("input", 784, 1, kMaxWidth);
  const int64_t output_width = parameters.integer_or("output", 10, 1, kMaxWidth);
  std::vector<int64_t> hidden{1024, 1024};
  if (auto widths = parameters.find("hidden")) {
    hidden.clear();
    for (const JsonReader& width : widths->elements()) hidden.push_back(width.as_integer(1, kMaxWidth));
    if (hidden.size() > kMaxHiddenLayers) widths->fail("more than 10000 hidden layers");
  }

  OpGraph graph("mlp");
  LayerBuilder builder(graph, batch_size, dtype_bytes);
  builder.set_layer("input");
  Tensor x = builder.input("features", {input_width});
  Tensor labels = builder.input("labels", {}, 4);
  for (size_t i = 0; i < hidden.size(); ++i) {
    builder.set_layer("fc" + std::to_string(i + 1));
    x = builder.relu("Relu", builder.dense("MatMul", x, hidden[i]));
  }
  builder.set_layer("logits");
  Tensor logits = builder.dense("MatMul", x, output_width);
  builder.set_layer("loss");
  builder.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
