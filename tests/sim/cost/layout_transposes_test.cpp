// Layout transposes around tensor-core convolutions in an NCHW framework, against byte counts and
// times worked out by hand.
#include <gtest/gtest.h>

#include "sim/cost/cost_model.h"
#include "sim/cost/layout_transposes.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::compute_task;
using testing::gpus;
using testing::round_gpu;

/// A Volta-like GPU: 1 TB/s, elementwise kernels at 0.8 of it, fp16 on tensor cores.
DeviceSpec volta() {
  DeviceSpec spec = round_gpu(1e13, 1e12);
  spec.peak_flops_per_second[Precision::kFp16] = 1e14;
  spec.compute_capability = "7.0";
  spec.memory_efficiency = 0.8;
  return spec;
}

/// A 3x3 stride-1 convolution: n 32, c 64, 56x56 -> k 64, 56x56 (padding 1).
Task conv_task(uint8_t passes, int64_t r = 3, int64_t stride = 1) {
  KernelShape shape;
  shape.kind = KernelKind::kConv2d;
  shape.conv.n = 32;
  shape.conv.c = 64;
  shape.conv.h = shape.conv.w = 56;
  shape.conv.k = 64;
  shape.conv.r = shape.conv.s = r;
  shape.conv.pad_h = shape.conv.pad_w = r / 2;
  shape.conv.stride_h = shape.conv.stride_w = stride;
  Task task = compute_task(0, shape.conv.direct_flops(), 0, OpKind::kConv);
  task.kernel = std::make_shared<const KernelShape>(shape);
  task.kernel_passes = passes;
  return task;
}

// fp16 (2 bytes): input = output = 32 x 64 x 56 x 56 x 2 = 12,845,056 bytes; filter 64 x 64 x 9 x 2
// = 73,728. Forward transposes the input and the filter, each read and written once.
TEST(LayoutTransposes, ForwardMovesTheInputAndTheFilterTwice) {
  const double input = 12845056, filter = 73728;
  EXPECT_DOUBLE_EQ(layout_transpose_bytes(conv_task(kForwardPass), Precision::kFp16, MemoryFormat::kNchw, volta()),
                   2 * (input + filter));
  // Backward, both passes: output gradient + filter + input gradient, then the input + the filter
  // gradient (the output gradient is already transposed).
  EXPECT_DOUBLE_EQ(layout_transpose_bytes(conv_task(kBackwardPasses), Precision::kFp16, MemoryFormat::kNchw, volta()),
                   2 * (input + filter + input + input + filter));
  // Only the filter pass (a first layer): input, filter gradient and the output gradient.
  EXPECT_DOUBLE_EQ(layout_transpose_bytes(conv_task(kBackwardFilterPass), Precision::kFp16, MemoryFormat::kNchw, volta()),
                   2 * (input + filter + input));
}

TEST(LayoutTransposes, NoneUnderNhwcOffTensorCoresOrForAPointwiseConvolution) {
  const DeviceSpec spec = volta();
  EXPECT_EQ(layout_transpose_bytes(conv_task(kForwardPass), Precision::kFp16, MemoryFormat::kNhwc, spec), 0);
  EXPECT_EQ(layout_transpose_bytes(conv_task(kForwardPass), Precision::kFp32, MemoryFormat::kNchw, spec), 0);
  EXPECT_EQ(layout_transpose_bytes(conv_task(kForwardPass), Precision::kTf32, MemoryFormat::kNchw, spec), 0);  // Volta
  EXPECT_EQ(layout_transpose_bytes(conv_task(kForwardPass, 1), Precision::kFp16, MemoryFormat::kNchw, spec), 0);
  DeviceSpec pascal = spec;
  pascal.compute_capability = "6.0";  // fp16 at twice fp32, no tensor cores
  EXPECT_EQ(layout_transpose_bytes(conv_task(kForwardPass), Precision::kFp16, MemoryFormat::kNchw, pascal), 0);
  // A strided 1x1 convolution (a ResNet downsample) runs NHWC kernels: transposed.
  EXPECT_GT(layout_transpose_bytes(conv_task(kForwardPass, 1, 2), Precision::kFp16, MemoryFormat::kNchw, spec), 0);
  DeviceSpec ampere = spec;
  ampere.compute_capability = "8.0";
  EXPECT_GT(layout_transpose_bytes(conv_task(kForwardPass), Precision::kTf32, MemoryFormat::kNchw, ampere), 0);
}

// The time: bytes / (1 TB/s x 0.8 x 1000.8 / (1555 x 0.901)), added to the convolution's own.
TEST(LayoutTransposes, TheyRunAtTheMeasuredFractionOfTheElementwiseBandwidth) {
  const DeviceSpec spec = volta();
  const Task task = conv_task(kForwardPass);
  const double bytes = 2 * (12845056.0 + 73728.0);
  const double expected = bytes / (1e12 * 0.8 * (1000.8 / (1555.0 * 0.901)));
  EXPECT_NEAR(layout_transpose_seconds(task, Precision::kFp16, MemoryFormat::kNchw, spec), expected, expected * 1e-12);
  const Cluster cluster = gpus(1, spec);
  EXPECT_NEAR(compute_seconds(task, Precision::kFp16, MemoryFormat::kNchw, cluster.device(0)) -
                  compute_seconds(task, Precision::kFp16, MemoryFormat::kNhwc, cluster.device(0)),
              expected, expected * 1e-9);
}

}  // namespace
}  // namespace placesim
