// alexnet: the one-tower AlexNet of torchvision (Krizhevsky, "One weird trick for parallelizing
// convolutional neural networks", 2014, arXiv:1404.5997), which TensorFlow's tf_cnn_benchmarks
// also models as one tower: 5 convolutions (64, 192, 384, 256, 256 channels) and 3 fully
// connected layers. Published: 61,100,840 parameters and 0.71 GMACs per 224x224 image
// (torchvision.models.AlexNet_Weights.IMAGENET1K_V1 metadata).
#include "models/cnn_parameters.h"
#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {

OpGraph build_alexnet(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  const CnnParameters p = read_cnn_parameters(parameters, 224);
  OpGraph graph("alexnet");
  LayerBuilder builder(graph, batch_size, dtype_bytes);
  builder.set_layer("input");
  Tensor x = builder.input("images", {3, p.image_size, p.image_size});
  Tensor labels = builder.input("labels", {}, 4);

  struct ConvLayer {
    const char* name;
    int64_t channels, kernel, stride, pad;
    bool pool_after;
  };
  const ConvLayer convs[] = {
      {"conv1", 64, 11, 4, 2, true},   {"conv2", 192, 5, 1, 2, true}, {"conv3", 384, 3, 1, 1, false},
      {"conv4", 256, 3, 1, 1, false},  {"conv5", 256, 3, 1, 1, true},
  };
  for (const ConvLayer& conv : convs) {
    builder.set_layer(conv.name);
    x = builder.conv2d("Conv2D", x, Conv2dOptions::square(conv.channels, conv.kernel, conv.stride, conv.pad, true));
    x = builder.relu("Relu", x);
    if (conv.pool_after) x = builder.max_pool("MaxPool", x, {3, 2, 0});
  }
  // torchvision's AdaptiveAvgPool2d((6, 6)) is the identity at 224x224; the classifier expects
  // 256 x 6 x 6 inputs, so other sizes change the first FC layer's width with the feature map.
  builder.set_layer("flatten");
  x = builder.flatten("Reshape", x);
  builder.set_layer("fc6");
  x = builder.relu("Relu", builder.dense("MatMul", builder.dropout("Dropout", x), 4096));
  builder.set_layer("fc7");
  x = builder.relu("Relu", builder.dense("MatMul", builder.dropout("Dropout", x), 4096));
  builder.set_layer("fc8");
  Tensor logits = builder.dense("MatMul", x, p.num_classes);
  builder.set_layer("loss");
  builder.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
