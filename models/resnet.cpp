// resnet50/101/152: ResNet v1.5 (He et al., "Deep Residual Learning for Image Recognition", 2016,
// with the stride of each downsampling bottleneck on its 3x3 convolution, as torchvision and
// NVIDIA's reference implementation). Convolutions have no bias; each is followed by batch norm.
// Published (torchvision IMAGENET1K_V1 metadata, 224x224): ResNet-50 25,557,032 parameters and
// 4.09 GMACs; ResNet-101 44,549,160 and 7.80; ResNet-152 60,192,808 and 11.51.
#include <stdexcept>
#include <string>

#include "models/cnn_parameters.h"
#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {
namespace {

// Bottleneck blocks per stage (He et al. 2016, Table 1).
struct StageDepths {
  int blocks[4];
};

StageDepths stage_depths(int depth) {
  switch (depth) {
    case 50: return {{3, 4, 6, 3}};
    case 101: return {{3, 4, 23, 3}};
    case 152: return {{3, 8, 36, 3}};
  }
  throw std::invalid_argument("build_resnet: depth must be 50, 101 or 152");
}

// 1x1 (width) -> 3x3 (width, stride) -> 1x1 (4 x width), plus a projection shortcut when the
// shape changes; ReLU after the residual add.
Tensor bottleneck(LayerBuilder& builder, const Tensor& input, int64_t width, int64_t stride) {
  const int64_t out_channels = 4 * width;
  Tensor x = builder.conv2d("conv1", input, Conv2dOptions::square(width, 1));
  x = builder.relu("relu1", builder.batch_norm("bn1", x));
  x = builder.conv2d("conv2", x, Conv2dOptions::square(width, 3, stride, 1));
  x = builder.relu("relu2", builder.batch_norm("bn2", x));
  x = builder.conv2d("conv3", x, Conv2dOptions::square(out_channels, 1));
  x = builder.batch_norm("bn3", x);
  Tensor shortcut = input;
  if (stride != 1 || input.shape[1] != out_channels) {
    shortcut = builder.conv2d("downsample.0", input, Conv2dOptions::square(out_channels, 1, stride));
    shortcut = builder.batch_norm("downsample.1", shortcut);
  }
  return builder.relu("relu3", builder.add("add", x, shortcut));
}

}  // namespace

OpGraph build_resnet(int depth, const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  const StageDepths depths = stage_depths(depth);
  const CnnParameters p = read_cnn_parameters(parameters, 224);
  OpGraph graph("resnet" + std::to_string(depth));
  LayerBuilder builder(graph, batch_size, dtype_bytes);
  builder.set_layer("input");
  Tensor x = builder.input("images", {3, p.image_size, p.image_size});
  Tensor labels = builder.input("labels", {}, 4);

  builder.set_layer("conv1");
  x = builder.conv2d("Conv2D", x, Conv2dOptions::square(64, 7, 2, 3));
  x = builder.relu("Relu", builder.batch_norm("FusedBatchNorm", x));
  builder.set_layer("maxpool");
  x = builder.max_pool("MaxPool", x, {3, 2, 1});

  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int block = 0; block < depths.blocks[stage]; ++block) {
      builder.set_layer("layer" + std::to_string(stage + 1) + "." + std::to_string(block));
      const int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      x = bottleneck(builder, x, width, stride);
    }
  }
  builder.set_layer("avgpool");
  x = builder.global_avg_pool("Mean", x);
  builder.set_layer("fc");
  Tensor logits = builder.dense("MatMul", x, p.num_classes);
  builder.set_layer("loss");
  builder.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
