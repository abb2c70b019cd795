// amoebanet_d: AmoebaNet-D (Real et al. 2019, "Regularized Evolution for Image Classifier
// Architecture Search", AAAI; the cells of the TensorFlow TPU reference, models/official/amoeba_net)
// at the sizes the GPipe paper (Huang et al. 2019, table 1) trains with pipeline parallelism:
// AmoebaNet-D (L, D), L normal cells in three groups of L / 3, D filters.
//
//   stem: ReLU, 3x3 convolution (stride 2) to D / 4 channels, batch norm; two reduction cells;
//   then L / 3 normal cells, a reduction cell, L / 3 normal cells, a reduction cell, L / 3 normal
//   cells; global average pool, fully connected to the classes, softmax cross-entropy.
//   Channels c: D / 4 at the stem, doubled by every reduction cell (D at the first normal cells).
//
// A cell takes the two previous cells' outputs (prev, prev_prev; the first cell takes the stem's
// output twice). It brings prev to c channels (ReLU, 1x1 convolution, batch norm) and prev_prev
// too: halved in resolution by a factorized reduction (ReLU, two 1x1 convolutions of stride 2 to
// c / 2 channels each, concatenated, batch norm) when the previous cell reduced, by a ReLU-1x1-BN
// when its channels differ, as it is otherwise. Five pairs of operations then each add a state,
// from states 0 and 1 (the two inputs) and the states added before; in a reduction cell an
// operation on an input has stride 2. The cell's output concatenates states (normal: 0, 3, 4, 6,
// 4c channels, as the TensorFlow reference does; reduction: 4, 5, 6, 3c).
//   normal:    (1 conv 1x1, 1 max 3x3), (1 none, 0 conv 1x7-7x1), (0 conv 1x1, 0 conv 1x7-7x1),
//              (2 max 3x3, 2 none), (1 avg 3x3, 5 conv 1x1)
//   reduction: (0 max 2x2, 0 max 3x3), (2 none, 1 conv 3x3), (2 conv 1x7-7x1, 2 max 3x3),
//              (3 none, 1 max 2x2), (2 avg 3x3, 3 conv 1x1)
// Operations: conv 1x1 = ReLU, 1x1 convolution, batch norm (c -> c); conv 3x3 and conv 1x7-7x1 =
// bottlenecks through c / 4 channels (ReLU-conv-BN 1x1 down, one 3x3 or a 1x7 then a 7x1, 1x1 up);
// pools with padding 1 (3x3) or none (2x2); "none" is the identity, a factorized reduction with
// stride 2. Convolutions have no bias.
//
// Parameters: 81,505,540 at (18, 208), 319,024,120 (18, 416), 542,734,840 (18, 544),
// 1,055,832,376 (36, 544) and 1,844,858,344 (72, 512) with 1,000 classes: torchgpipe's
// AmoebaNet-D memory benchmark lists 81.5M, 319.0M, 542.7M, 1.06B and 1.84B, the GPipe paper's
// table 1 82M, 318M, 542M, 1.05B and 1.8B (tests/models/zoo_test.cpp).
// Not modelled: the factorized reduction's one-pixel shift and pad before its second
// convolution (a copy; both convolutions read the same ReLU output here).
#include <string>
#include <utility>
#include <vector>

#include "models/cnn_parameters.h"
#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {
namespace {

constexpr int64_t kMaxCells = 3000;
constexpr int64_t kMaxFilters = 1 << 16;

enum class CellOp { kConv1x1, kConv3x3, kConv1x7x7x1, kMax3x3, kMax2x2, kAvg3x3, kNone };

/// One of a cell's operations: the state it reads and what it does.
struct CellStep {
  int input;
  CellOp op;
};

/// Each pair of steps adds the next state (2, 3, ... 6) as the sum of its two operations.
constexpr CellStep kNormalCell[] = {
    {1, CellOp::kConv1x1}, {1, CellOp::kMax3x3},          // state 2
    {1, CellOp::kNone},    {0, CellOp::kConv1x7x7x1},     // state 3
    {0, CellOp::kConv1x1}, {0, CellOp::kConv1x7x7x1},     // state 4
    {2, CellOp::kMax3x3},  {2, CellOp::kNone},            // state 5
    {1, CellOp::kAvg3x3},  {5, CellOp::kConv1x1},         // state 6
};
constexpr int kNormalOutputs[] = {0, 3, 4, 6};
constexpr CellStep kReductionCell[] = {
    {0, CellOp::kMax2x2},      {0, CellOp::kMax3x3},      // state 2
    {2, CellOp::kNone},        {1, CellOp::kConv3x3},     // state 3
    {2, CellOp::kConv1x7x7x1}, {2, CellOp::kMax3x3},      // state 4
    {3, CellOp::kNone},        {1, CellOp::kMax2x2},      // state 5
    {2, CellOp::kAvg3x3},      {3, CellOp::kConv1x1},     // state 6
};
constexpr int kReductionOutputs[] = {4, 5, 6};

/// ReLU, convolution, batch norm under `name`.
Tensor relu_conv_bn(LayerBuilder& b, const std::string& name, const Tensor& x, const Conv2dOptions& options) {
  Tensor y = b.relu(name + "/relu", x);
  y = b.conv2d(name + "/conv", y, options);
  return b.batch_norm(name + "/bn", y);
}

/// ReLU, two 1x1 convolutions of stride 2 to `channels` / 2 each, concatenated, batch norm.
Tensor factorized_reduce(LayerBuilder& b, const std::string& name, const Tensor& x, int64_t channels) {
  const Tensor y = b.relu(name + "/relu", x);
  const Tensor left = b.conv2d(name + "/conv1", y, Conv2dOptions::square(channels / 2, 1, 2));
  const Tensor right = b.conv2d(name + "/conv2", y, Conv2dOptions::square(channels / 2, 1, 2));
  return b.batch_norm(name + "/bn", b.concat(name + "/concat", {left, right}));
}

Tensor cell_op(LayerBuilder& b, const std::string& name, const Tensor& x, CellOp op, int64_t stride) {
  const int64_t c = x.shape[1];
  switch (op) {
    case CellOp::kConv1x1:
      return relu_conv_bn(b, name, x, Conv2dOptions::square(c, 1, stride));
    case CellOp::kConv3x3: {
      Tensor y = relu_conv_bn(b, name + "/down", x, Conv2dOptions::square(c / 4, 1));
      y = relu_conv_bn(b, name + "/3x3", y, Conv2dOptions::square(c / 4, 3, stride, 1));
      return relu_conv_bn(b, name + "/up", y, Conv2dOptions::square(c, 1));
    }
    case CellOp::kConv1x7x7x1: {
      Tensor y = relu_conv_bn(b, name + "/down", x, Conv2dOptions::square(c / 4, 1));
      Conv2dOptions wide{c / 4, 1, 7, 1, stride, 0, 3};
      y = relu_conv_bn(b, name + "/1x7", y, wide);
      Conv2dOptions tall{c / 4, 7, 1, stride, 1, 3, 0};
      y = relu_conv_bn(b, name + "/7x1", y, tall);
      return relu_conv_bn(b, name + "/up", y, Conv2dOptions::square(c, 1));
    }
    case CellOp::kMax3x3:
      return b.max_pool(name + "/MaxPool", x, {3, stride, 1});
    case CellOp::kMax2x2:
      return b.max_pool(name + "/MaxPool", x, {2, stride, 0});
    case CellOp::kAvg3x3:
      return b.avg_pool(name + "/AvgPool", x, {3, stride, 1});
    case CellOp::kNone:
      return stride == 1 ? x : factorized_reduce(b, name, x, c);
  }
  return x;
}

/// One cell on (prev, prev_prev) with `channels` channels; `reduction_prev` when the previous
/// cell reduced the resolution.
Tensor cell(LayerBuilder& b, const Tensor& prev, const Tensor& prev_prev, int64_t channels, bool reduction,
            bool reduction_prev) {
  std::vector<Tensor> states;
  states.push_back(relu_conv_bn(b, "reduce1", prev, Conv2dOptions::square(channels, 1)));
  if (reduction_prev) {
    states.push_back(factorized_reduce(b, "reduce2", prev_prev, channels));
  } else if (prev_prev.shape[1] != channels) {
    states.push_back(relu_conv_bn(b, "reduce2", prev_prev, Conv2dOptions::square(channels, 1)));
  } else {
    states.push_back(prev_prev);
  }
  const CellStep* steps = reduction ? kReductionCell : kNormalCell;
  for (int pair = 0; pair < 5; ++pair) {
    Tensor h[2];
    for (int k = 0; k < 2; ++k) {
      const CellStep& step = steps[2 * pair + k];
      const int64_t stride = reduction && step.input < 2 ? 2 : 1;
      h[k] = cell_op(b, "op" + std::to_string(2 * pair + k), states[static_cast<size_t>(step.input)], step.op, stride);
    }
    states.push_back(b.add("add" + std::to_string(pair), h[0], h[1]));
  }
  std::vector<Tensor> outputs;
  if (reduction) {
    for (int i : kReductionOutputs) outputs.push_back(states[static_cast<size_t>(i)]);
  } else {
    for (int i : kNormalOutputs) outputs.push_back(states[static_cast<size_t>(i)]);
  }
  return b.concat("concat", outputs);
}

}  // namespace

OpGraph build_amoebanet_d(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys({"layers", "filters", "image_size", "num_classes"});
  const int64_t layers = parameters.integer_or("layers", 18, 3, kMaxCells);
  if (layers % 3 != 0) {
    parameters.at("layers").fail("AmoebaNet-D's normal cells come in three equal groups: " + std::to_string(layers) +
                                 " is not a multiple of 3");
  }
  const int64_t filters = parameters.integer_or("filters", 256, 8, kMaxFilters);
  if (filters % 8 != 0) {
    parameters.at("filters").fail("the stem's D / 4 channels are halved by the bottlenecks' c / 4 and the "
                                  "factorized reductions' c / 2: " + std::to_string(filters) +
                                  " filters are not a multiple of 8");
  }
  const int64_t image_size = parameters.integer_or("image_size", 224, 1, kMaxImageSize);
  const int64_t num_classes = parameters.integer_or("num_classes", 1000, 1, kMaxClasses);

  OpGraph graph("amoebanet_d");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  b.set_layer("input");
  const Tensor images = b.input("images", {3, image_size, image_size});
  const Tensor labels = b.input("labels", {}, 4);

  int64_t channels = filters / 4;
  b.set_layer("stem1");
  Tensor prev = relu_conv_bn(b, "stem", images, Conv2dOptions::square(channels, 3, 2, 1));
  Tensor prev_prev = prev;
  bool reduction_prev = false;
  auto add_cell = [&](const std::string& layer, bool reduction) {
    if (reduction) channels *= 2;
    b.set_layer(layer);
    Tensor out = cell(b, prev, prev_prev, channels, reduction, reduction_prev);
    prev_prev = prev;
    prev = out;
    reduction_prev = reduction;
  };
  add_cell("stem2", true);
  add_cell("stem3", true);
  for (int group = 1; group <= 3; ++group) {
    const std::string normal = "cell" + std::to_string(2 * group - 1) + "_normal";
    for (int64_t i = 1; i <= layers / 3; ++i) add_cell(normal + std::to_string(i), false);
    if (group < 3) add_cell("cell" + std::to_string(2 * group) + "_reduction", true);
  }
  b.set_layer("classify");
  Tensor pooled = b.global_avg_pool("Mean", prev);
  Tensor logits = b.dense("MatMul", pooled, num_classes);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
