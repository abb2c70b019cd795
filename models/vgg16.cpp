// vgg16: VGG-16, configuration D of Simonyan & Zisserman, "Very Deep Convolutional Networks for
// Large-Scale Image Recognition" (2015), without batch norm, as torchvision.models.vgg16: 13 3x3
// convolutions and 3 fully connected layers. Published: 138,357,544 parameters and 15.47 GMACs per
// 224x224 image (torchvision VGG16_Weights.IMAGENET1K_V1 metadata).
#include <string>

#include "models/cnn_parameters.h"
#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {

OpGraph build_vgg16(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  const CnnParameters p = read_cnn_parameters(parameters, 224);
  OpGraph graph("vgg16");
  LayerBuilder builder(graph, batch_size, dtype_bytes);
  builder.set_layer("input");
  Tensor x = builder.input("images", {3, p.image_size, p.image_size});
  Tensor labels = builder.input("labels", {}, 4);

  // Configuration D: convolutions per stage and their channels; a 2x2 max pool ends each stage.
  const int64_t stage_convs[] = {2, 2, 3, 3, 3};
  const int64_t stage_channels[] = {64, 128, 256, 512, 512};
  for (int stage = 0; stage < 5; ++stage) {
    for (int64_t i = 0; i < stage_convs[stage]; ++i) {
      builder.set_layer("conv" + std::to_string(stage + 1) + "_" + std::to_string(i + 1));
      x = builder.conv2d("Conv2D", x, Conv2dOptions::square(stage_channels[stage], 3, 1, 1, true));
      x = builder.relu("Relu", x);
    }
    builder.set_layer("pool" + std::to_string(stage + 1));
    x = builder.max_pool("MaxPool", x, {2, 2, 0});
  }
  // torchvision's AdaptiveAvgPool2d((7, 7)) is the identity at 224x224 (omitted).
  builder.set_layer("flatten");
  x = builder.flatten("Reshape", x);
  builder.set_layer("fc6");
  x = builder.dropout("Dropout", builder.relu("Relu", builder.dense("MatMul", x, 4096)));
  builder.set_layer("fc7");
  x = builder.dropout("Dropout", builder.relu("Relu", builder.dense("MatMul", x, 4096)));
  builder.set_layer("fc8");
  Tensor logits = builder.dense("MatMul", x, p.num_classes);
  builder.set_layer("loss");
  builder.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
