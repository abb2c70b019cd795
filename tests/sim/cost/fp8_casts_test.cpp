// Transformer Engine's FP8 casts around a linear layer's GEMMs (sim/cost/fp8_casts.h), against
// byte counts and times worked out by hand, and the flags that mark a normalization's output and
// the output layer (which an fp8 run keeps in bf16).
#include <gtest/gtest.h>

#include "models/layer_builder.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/fp8_casts.h"
#include "sim/graph/kernel_shape_json.h"
#include "sim/plan/kernel_precision.h"
#include "sim/planner/memory_model.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::compute_task;
using testing::round_gpu;

/// A Hopper-like GPU without a kernel model: 1 TB/s, elementwise kernels at 0.8 of it, 4 us per launch.
DeviceSpec hopper() {
  DeviceSpec spec = round_gpu(1e13, 1e12, 4e-6);
  spec.peak_flops_per_second[Precision::kBf16] = 1e15;
  spec.peak_flops_per_second[Precision::kFp8] = 2e15;
  spec.memory_efficiency = 0.8;
  return spec;
}

/// Llama 2 7B's first MLP GEMM on one 4,096-token micro-batch of a 4-micro-batch step: m 16,384
/// rows for the step (4,096 per micro-batch), k 4,096 in, n 11,008 out.
Task dense_task(uint8_t passes, bool from_norm) {
  GemmShape gemm;
  gemm.m = 16384;
  gemm.n = 11008;
  gemm.k = 4096;
  gemm.input_from_normalization = from_norm;
  Task task = compute_task(0, 2.0 * 4096 * 11008 * 4096, 0, OpKind::kMatMul);
  task.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
  task.kernel_passes = passes;
  task.kernel_samples = 0.25;
  return task;
}

constexpr double kM = 4096, kN = 11008, kK = 4096;

// Forward: the input cast and transposed, 2 bytes read + 1 + 1 written per element = 4 m k; the
// backward (one cast whichever passes it runs): the output gradient likewise, 4 m n.
TEST(Fp8Casts, ALinearLayerCastsItsInputForwardAndItsOutputGradientBackward) {
  const Fp8Casts forward = fp8_casts(dense_task(kForwardPass, false), Precision::kFp8);
  EXPECT_DOUBLE_EQ(forward.bytes, 4 * kM * kK);
  EXPECT_EQ(forward.kernels, 1);
  for (uint8_t passes : {uint8_t(kBackwardPasses), uint8_t(kBackwardDataPass), uint8_t(kBackwardFilterPass)}) {
    const Fp8Casts backward = fp8_casts(dense_task(passes, false), Precision::kFp8);
    EXPECT_DOUBLE_EQ(backward.bytes, 4 * kM * kN);
    EXPECT_EQ(backward.kernels, 1);
  }
  // Recomputation: the backward task runs the forward again, its cast too.
  const Fp8Casts recomputed = fp8_casts(dense_task(kForwardPass | kBackwardPasses, false), Precision::kFp8);
  EXPECT_DOUBLE_EQ(recomputed.bytes, 4 * kM * kK + 4 * kM * kN);
  EXPECT_EQ(recomputed.kernels, 2);
}

// Fed by a layer norm, the norm writes FP8 itself: nothing forward, and backward the FP8 input
// transposed for the weight gradient (1 byte read, 1 written) beside the gradient's cast.
TEST(Fp8Casts, ANormsOutputIsCastInTheNormAndOnlyTransposedBackward) {
  EXPECT_EQ(fp8_casts(dense_task(kForwardPass, true), Precision::kFp8).kernels, 0);
  const Fp8Casts backward = fp8_casts(dense_task(kBackwardPasses, true), Precision::kFp8);
  EXPECT_DOUBLE_EQ(backward.bytes, 4 * kM * kN + 2 * kM * kK);
  EXPECT_EQ(backward.kernels, 2);
}

TEST(Fp8Casts, NoneOutsideFp8OrForAttentionsBatchedGemmsOrOpsWithoutAShape) {
  for (Precision precision : {Precision::kBf16, Precision::kFp16, Precision::kFp32}) {
    EXPECT_EQ(fp8_casts(dense_task(kForwardPass | kBackwardPasses, false), precision).kernels, 0);
  }
  Task scores = dense_task(kForwardPass, false);
  GemmShape batched = scores.kernel->gemm;
  batched.samples_in_batch = true;
  scores.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(batched));
  EXPECT_EQ(fp8_casts(scores, Precision::kFp8).kernels, 0);
  EXPECT_EQ(fp8_casts(compute_task(0, 1e9, 1e6, OpKind::kMatMul), Precision::kFp8).kernels, 0);
}

// Time: bytes / (1 TB/s x 0.8) + 4 us per kernel, added to the GEMM's own time.
TEST(Fp8Casts, TheirTimeIsTheirBytesAtTheElementwiseBandwidthPlusALaunchEach) {
  ClusterDevice device;
  device.spec = hopper();
  const Task task = dense_task(kBackwardPasses, true);
  const double casts = (4 * kM * kN + 2 * kM * kK) / (1e12 * 0.8) + 2 * 4e-6;  // 0.2424 ms
  EXPECT_NEAR(fp8_cast_seconds(task, Precision::kFp8, device.spec), casts, casts * 1e-12);
  // The same task without its kernel shape has the same roofline and no casts.
  Task unshaped = task;
  unshaped.kernel.reset();
  EXPECT_NEAR(compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, device) -
                  compute_seconds(unshaped, Precision::kFp8, MemoryFormat::kNchw, device),
              casts, casts * 1e-9);
}

TEST(Fp8Casts, TheLayerBuilderMarksADenseLayerFedByANorm) {
  OpGraph graph("test");
  LayerBuilder b(graph, 2, 2);
  Tensor x = b.input("x", {8, 16}, 2);
  Tensor normed = b.layer_norm("ln", x);
  Tensor h = b.dense("fc1", normed, 32);
  b.dense("fc2", h, 16);
  EXPECT_TRUE(graph.op(graph.find("fc1")).kernel->gemm.input_from_normalization);
  EXPECT_FALSE(graph.op(graph.find("fc2")).kernel->gemm.input_from_normalization);
}

// The GEMM whose output the loss reads, directly or through a bias add, is the output layer; an
// fp8 run keeps it in bf16 (Megatron-Core's output layer is outside Transformer Engine), so it
// pays no casts and keeps no FP8 weight copies.
TEST(Fp8Casts, TheLayerBuilderMarksTheOutputLayerWhichStaysBf16WithoutCasts) {
  OpGraph graph("test");
  LayerBuilder b(graph, 2, 2);
  Tensor x = b.input("x", {8, 16}, 2);
  Tensor labels = b.input("labels", {8}, 4);
  Tensor h = b.dense("fc1", x, 32);
  Tensor logits = b.bias_add("bias", b.dense("head", h, 64, /*bias=*/false));
  b.softmax_cross_entropy("xent", logits, labels);
  const Op& head = graph.op(graph.find("head"));
  const Op& fc1 = graph.op(graph.find("fc1"));
  EXPECT_TRUE(head.kernel->gemm.output_layer);
  EXPECT_FALSE(fc1.kernel->gemm.output_layer);
  EXPECT_EQ(kernel_precision(Precision::kFp8, head.kind, head.kernel.get()), Precision::kBf16);
  EXPECT_EQ(kernel_precision(Precision::kFp8, fc1.kind, fc1.kernel.get()), Precision::kFp8);
  Task task = compute_task(0, 1e9, 0, OpKind::kMatMul);
  task.kernel = head.kernel;
  task.kernel_passes = kForwardPass | kBackwardPasses;
  EXPECT_EQ(fp8_casts(task, Precision::kFp8).kernels, 0);
  EXPECT_DOUBLE_EQ(fp8_weight_cache_bytes_per_parameter(head, Precision::kFp8), 0);
  EXPECT_DOUBLE_EQ(fp8_weight_cache_bytes_per_parameter(fc1, Precision::kFp8), 2);
}

TEST(Fp8Casts, TheFlagsRoundTripThroughAKernelShapesJson) {
  GemmShape gemm;
  gemm.m = 8;
  gemm.n = 16;
  gemm.k = 32;
  gemm.input_from_normalization = true;
  gemm.output_layer = true;
  const KernelShape shape = KernelShape::of_gemm(gemm);
  const Json json = write_kernel_shape(shape);
  EXPECT_EQ(read_kernel_shape(JsonReader(json, "test", "/kernel")), shape);
}

}  // namespace
}  // namespace placesim
