// inception_v3: Inception v3 (Szegedy et al., "Rethinking the Inception Architecture for Computer
// Vision", 2016) as torchvision.models.inception_v3 builds it, WITHOUT the auxiliary classifier
// (aux_logits=False; the aux head adds 3,326,696 parameters and runs only in training). Every
// convolution is conv (no bias) + batch norm + ReLU; input 299x299.
// Published: 27,161,264 parameters with the aux head, hence 23,834,568 without it, and 5.71 GMACs
// per 299x299 image (torchvision Inception_V3_Weights.IMAGENET1K_V1 metadata; the aux head is not
// run at inference, so the MACs exclude it).
#include <string>
#include <vector>

#include "models/cnn_parameters.h"
#include "models/generators.h"
#include "models/layer_builder.h"

namespace placesim {
namespace {

// torchvision's BasicConv2d.
Tensor basic_conv(LayerBuilder& b, const std::string& name, const Tensor& x, int64_t channels, int64_t kernel_h,
                  int64_t kernel_w, int64_t stride = 1, int64_t pad_h = 0, int64_t pad_w = 0) {
  Conv2dOptions options;
  options.out_channels = channels;
  options.kernel_h = kernel_h;
  options.kernel_w = kernel_w;
  options.stride_h = options.stride_w = stride;
  options.pad_h = pad_h;
  options.pad_w = pad_w;
  Tensor y = b.conv2d(name + ".conv", x, options);
  return b.relu(name + ".relu", b.batch_norm(name + ".bn", y));
}

Tensor square_conv(LayerBuilder& b, const std::string& name, const Tensor& x, int64_t channels, int64_t kernel,
                   int64_t stride = 1, int64_t pad = 0) {
  return basic_conv(b, name, x, channels, kernel, kernel, stride, pad, pad);
}

// 35x35 module (Figure 5 of the paper): 1x1, 5x5, double 3x3 and pool branches.
Tensor inception_a(LayerBuilder& b, const Tensor& x, int64_t pool_features) {
  Tensor branch1x1 = square_conv(b, "branch1x1", x, 64, 1);
  Tensor branch5x5 = square_conv(b, "branch5x5_1", x, 48, 1);
  branch5x5 = square_conv(b, "branch5x5_2", branch5x5, 64, 5, 1, 2);
  Tensor branch3x3dbl = square_conv(b, "branch3x3dbl_1", x, 64, 1);
  branch3x3dbl = square_conv(b, "branch3x3dbl_2", branch3x3dbl, 96, 3, 1, 1);
  branch3x3dbl = square_conv(b, "branch3x3dbl_3", branch3x3dbl, 96, 3, 1, 1);
  Tensor branch_pool = b.avg_pool("branch_pool.avgpool", x, {3, 1, 1});
  branch_pool = square_conv(b, "branch_pool", branch_pool, pool_features, 1);
  return b.concat("concat", {branch1x1, branch5x5, branch3x3dbl, branch_pool});
}

// 35x35 -> 17x17 reduction.
Tensor inception_b(LayerBuilder& b, const Tensor& x) {
  Tensor branch3x3 = square_conv(b, "branch3x3", x, 384, 3, 2);
  Tensor branch3x3dbl = square_conv(b, "branch3x3dbl_1", x, 64, 1);
  branch3x3dbl = square_conv(b, "branch3x3dbl_2", branch3x3dbl, 96, 3, 1, 1);
  branch3x3dbl = square_conv(b, "branch3x3dbl_3", branch3x3dbl, 96, 3, 2);
  Tensor branch_pool = b.max_pool("branch_pool.maxpool", x, {3, 2, 0});
  return b.concat("concat", {branch3x3, branch3x3dbl, branch_pool});
}

// 17x17 module with factorized 7x7 convolutions (Figure 6); c7 is the bottleneck width.
Tensor inception_c(LayerBuilder& b, const Tensor& x, int64_t c7) {
  Tensor branch1x1 = square_conv(b, "branch1x1", x, 192, 1);
  Tensor branch7x7 = square_conv(b, "branch7x7_1", x, c7, 1);
  branch7x7 = basic_conv(b, "branch7x7_2", branch7x7, c7, 1, 7, 1, 0, 3);
  branch7x7 = basic_conv(b, "branch7x7_3", branch7x7, 192, 7, 1, 1, 3, 0);
  Tensor branch7x7dbl = square_conv(b, "branch7x7dbl_1", x, c7, 1);
  branch7x7dbl = basic_conv(b, "branch7x7dbl_2", branch7x7dbl, c7, 7, 1, 1, 3, 0);
  branch7x7dbl = basic_conv(b, "branch7x7dbl_3", branch7x7dbl, c7, 1, 7, 1, 0, 3);
  branch7x7dbl = basic_conv(b, "branch7x7dbl_4", branch7x7dbl, c7, 7, 1, 1, 3, 0);
  branch7x7dbl = basic_conv(b, "branch7x7dbl_5", branch7x7dbl, 192, 1, 7, 1, 0, 3);
  Tensor branch_pool = b.avg_pool("branch_pool.avgpool", x, {3, 1, 1});
  branch_pool = square_conv(b, "branch_pool", branch_pool, 192, 1);
  return b.concat("concat", {branch1x1, branch7x7, branch7x7dbl, branch_pool});
}

// 17x17 -> 8x8 reduction.
Tensor inception_d(LayerBuilder& b, const Tensor& x) {
  Tensor branch3x3 = square_conv(b, "branch3x3_1", x, 192, 1);
  branch3x3 = square_conv(b, "branch3x3_2", branch3x3, 320, 3, 2);
  Tensor branch7x7x3 = square_conv(b, "branch7x7x3_1", x, 192, 1);
  branch7x7x3 = basic_conv(b, "branch7x7x3_2", branch7x7x3, 192, 1, 7, 1, 0, 3);
  branch7x7x3 = basic_conv(b, "branch7x7x3_3", branch7x7x3, 192, 7, 1, 1, 3, 0);
  branch7x7x3 = square_conv(b, "branch7x7x3_4", branch7x7x3, 192, 3, 2);
  Tensor branch_pool = b.max_pool("branch_pool.maxpool", x, {3, 2, 0});
  return b.concat("concat", {branch3x3, branch7x7x3, branch_pool});
}

// 8x8 module with expanded 1x3 / 3x1 filter banks (Figure 7).
Tensor inception_e(LayerBuilder& b, const Tensor& x) {
  Tensor branch1x1 = square_conv(b, "branch1x1", x, 320, 1);
  Tensor branch3x3 = square_conv(b, "branch3x3_1", x, 384, 1);
  Tensor branch3x3_a = basic_conv(b, "branch3x3_2a", branch3x3, 384, 1, 3, 1, 0, 1);
  Tensor branch3x3_b = basic_conv(b, "branch3x3_2b", branch3x3, 384, 3, 1, 1, 1, 0);
  Tensor branch3x3dbl = square_conv(b, "branch3x3dbl_1", x, 448, 1);
  branch3x3dbl = square_conv(b, "branch3x3dbl_2", branch3x3dbl, 384, 3, 1, 1);
  Tensor branch3x3dbl_a = basic_conv(b, "branch3x3dbl_3a", branch3x3dbl, 384, 1, 3, 1, 0, 1);
  Tensor branch3x3dbl_b = basic_conv(b, "branch3x3dbl_3b", branch3x3dbl, 384, 3, 1, 1, 1, 0);
  Tensor branch_pool = b.avg_pool("branch_pool.avgpool", x, {3, 1, 1});
  branch_pool = square_conv(b, "branch_pool", branch_pool, 192, 1);
  // torchvision concatenates the 1x3/3x1 pairs first; one concat of all six moves the same bytes.
  return b.concat("concat", {branch1x1, branch3x3_a, branch3x3_b, branch3x3dbl_a, branch3x3dbl_b, branch_pool});
}

}  // namespace

OpGraph build_inception_v3(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  const CnnParameters p = read_cnn_parameters(parameters, 299);
  OpGraph graph("inception_v3");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  b.set_layer("input");
  Tensor x = b.input("images", {3, p.image_size, p.image_size});
  Tensor labels = b.input("labels", {}, 4);

  b.set_layer("Conv2d_1a_3x3");
  x = square_conv(b, "stem", x, 32, 3, 2);
  b.set_layer("Conv2d_2a_3x3");
  x = square_conv(b, "stem", x, 32, 3);
  b.set_layer("Conv2d_2b_3x3");
  x = square_conv(b, "stem", x, 64, 3, 1, 1);
  b.set_layer("maxpool1");
  x = b.max_pool("MaxPool", x, {3, 2, 0});
  b.set_layer("Conv2d_3b_1x1");
  x = square_conv(b, "stem", x, 80, 1);
  b.set_layer("Conv2d_4a_3x3");
  x = square_conv(b, "stem", x, 192, 3);
  b.set_layer("maxpool2");
  x = b.max_pool("MaxPool", x, {3, 2, 0});

  b.set_layer("Mixed_5b");
  x = inception_a(b, x, 32);
  b.set_layer("Mixed_5c");
  x = inception_a(b, x, 64);
  b.set_layer("Mixed_5d");
  x = inception_a(b, x, 64);
  b.set_layer("Mixed_6a");
  x = inception_b(b, x);
  const struct {
    const char* layer;
    int64_t c7;
  } modules_c[] = {{"Mixed_6b", 128}, {"Mixed_6c", 160}, {"Mixed_6d", 160}, {"Mixed_6e", 192}};
  for (const auto& module : modules_c) {
    b.set_layer(module.layer);
    x = inception_c(b, x, module.c7);
  }
  b.set_layer("Mixed_7a");
  x = inception_d(b, x);
  b.set_layer("Mixed_7b");
  x = inception_e(b, x);
  b.set_layer("Mixed_7c");
  x = inception_e(b, x);

  b.set_layer("avgpool");
  x = b.global_avg_pool("Mean", x);
  b.set_layer("fc");
  Tensor logits = b.dense("MatMul", b.dropout("Dropout", x), p.num_classes);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
