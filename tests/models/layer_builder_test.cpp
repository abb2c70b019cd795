// Specification of LayerBuilder's costs: each expected number is derived here from the formula in
// models/layer_builder.h.
#include "models/layer_builder.h"

#include <gtest/gtest.h>

namespace placesim {
namespace {

constexpr double kFloat32Bytes = 4;

TEST(LayerBuilderTest, Conv3x3HandExample) {
  // 3x3 conv, 8 -> 16 channels, 32x32 input, stride 1, pad 1, batch 2.
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  builder.set_layer("conv1");
  Tensor x = builder.input("images", {8, 32, 32});
  Tensor y = builder.conv2d("Conv2D", x, Conv2dOptions::square(16, 3, 1, 1));

  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 16, 32, 32}));
  const Op& op = graph.op(y.op);
  EXPECT_EQ(op.name, "conv1/Conv2D");
  EXPECT_EQ(op.layer, "conv1");
  EXPECT_EQ(op.type, "Conv2D");
  EXPECT_EQ(op.kind, OpKind::kConv);
  // MACs = N x Hout x Wout x Cout x Cin x kh x kw.
  const double macs = 2.0 * 32 * 32 * 16 * 8 * 9;
  EXPECT_DOUBLE_EQ(op.forward_flops, 2 * macs);
  EXPECT_DOUBLE_EQ(op.backward_flops, 4 * macs);
  const double weights = 16.0 * 8 * 9;
  EXPECT_DOUBLE_EQ(op.parameter_count, weights);
  const double input_elements = 2.0 * 8 * 32 * 32, output_elements = 2.0 * 16 * 32 * 32;
  EXPECT_DOUBLE_EQ(op.output_bytes, output_elements * kFloat32Bytes);
  EXPECT_DOUBLE_EQ(op.forward_bytes, (input_elements + weights + output_elements) * kFloat32Bytes);
  EXPECT_DOUBLE_EQ(op.backward_bytes, 2 * op.forward_bytes);

  auto inputs = graph.inputs(y.op);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].op, x.op);
  EXPECT_DOUBLE_EQ(inputs[0].edge.bytes, input_elements * kFloat32Bytes);
}

TEST(LayerBuilderTest, ConvStrideGroupsAndBias) {
  OpGraph graph;
  LayerBuilder builder(graph, 1, kFloat32Bytes);
  Tensor x = builder.input("images", {3, 224, 224});
  // ResNet stem: 7x7, stride 2, pad 3 -> floor((224 + 6 - 7) / 2) + 1 = 112.
  Tensor stem = builder.conv2d("stem", x, Conv2dOptions::square(64, 7, 2, 3, /*bias=*/true));
  EXPECT_EQ(stem.shape, (std::vector<int64_t>{1, 64, 112, 112}));
  EXPECT_DOUBLE_EQ(graph.op(stem.op).parameter_count, 64.0 * 3 * 49 + 64);
  EXPECT_DOUBLE_EQ(graph.op(stem.op).forward_flops, 2.0 * 112 * 112 * 64 * 3 * 49);  // bias add not counted

  // Depthwise 3x3 (groups = channels): each output reads 1 x 3 x 3 inputs.
  Conv2dOptions depthwise = Conv2dOptions::square(64, 3, 1, 1);
  depthwise.groups = 64;
  Tensor dw = builder.conv2d("depthwise", stem, depthwise);
  EXPECT_DOUBLE_EQ(graph.op(dw.op).parameter_count, 64.0 * 9);
  EXPECT_DOUBLE_EQ(graph.op(dw.op).forward_flops, 2.0 * 112 * 112 * 64 * 9);

  // Asymmetric 1x7 kernel with (0, 3) padding keeps the spatial size.
  Conv2dOptions one_by_seven;
  one_by_seven.out_channels = 32;
  one_by_seven.kernel_h = 1;
  one_by_seven.kernel_w = 7;
  one_by_seven.pad_w = 3;
  Tensor factorized = builder.conv2d("1x7", stem, one_by_seven);
  EXPECT_EQ(factorized.shape, (std::vector<int64_t>{1, 32, 112, 112}));
  EXPECT_DOUBLE_EQ(graph.op(factorized.op).forward_flops, 2.0 * 112 * 112 * 32 * 64 * 7);
}

TEST(LayerBuilderTest, ShapeErrors) {
  OpGraph graph;
  LayerBuilder builder(graph, 1, kFloat32Bytes);
  Tensor x = builder.input("images", {3, 8, 8});
  EXPECT_THROW(builder.conv2d("big", x, Conv2dOptions::square(4, 11)), ShapeError);
  Conv2dOptions bad_groups = Conv2dOptions::square(4, 1);
  bad_groups.groups = 2;  // 3 input channels are not divisible by 2
  EXPECT_THROW(builder.conv2d("groups", x, bad_groups), ShapeError);
  EXPECT_THROW(builder.max_pool("pool", x, {9, 1, 0}), ShapeError);
  Tensor y = builder.input("other", {4, 8, 8});
  EXPECT_THROW(builder.add("add", x, y), ShapeError);
  EXPECT_THROW(builder.concat("concat", {x, builder.input("small", {3, 4, 4})}), ShapeError);
  EXPECT_THROW(builder.reshape("reshape", x, {1, 100}), ShapeError);
  EXPECT_THROW(LayerBuilder(graph, 0, kFloat32Bytes), std::invalid_argument);
}

TEST(LayerBuilderTest, DenseAndTiedWeights) {
  OpGraph graph;
  LayerBuilder builder(graph, 4, 2);  // fp16
  Tensor x = builder.input("features", {100});
  Tensor y = builder.dense("fc", x, 10);
  const Op& fc = graph.op(y.op);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{4, 10}));
  EXPECT_EQ(fc.type, "MatMul");
  EXPECT_DOUBLE_EQ(fc.forward_flops, 2.0 * 4 * 100 * 10);  // 2 x rows x in x out
  EXPECT_DOUBLE_EQ(fc.backward_flops, 4.0 * 4 * 100 * 10);
  EXPECT_DOUBLE_EQ(fc.parameter_count, 100.0 * 10 + 10);
  EXPECT_DOUBLE_EQ(fc.forward_bytes, (4.0 * 100 + 1010 + 4.0 * 10) * 2);

  // On [N, S, in] the rows are N x S; tied weights add no parameters but are still read.
  Tensor tokens = builder.input("tokens", {16, 8});
  Tensor tied = builder.dense("logits", tokens, 32, /*bias=*/false, /*tied=*/true);
  EXPECT_EQ(tied.shape, (std::vector<int64_t>{4, 16, 32}));
  EXPECT_DOUBLE_EQ(graph.op(tied.op).forward_flops, 2.0 * 4 * 16 * 8 * 32);
  EXPECT_DOUBLE_EQ(graph.op(tied.op).parameter_count, 0);
  EXPECT_DOUBLE_EQ(graph.op(tied.op).forward_bytes, (4.0 * 16 * 8 + 8 * 32 + 4.0 * 16 * 32) * 2);
}

TEST(LayerBuilderTest, NormalizationElementwiseAndPooling) {
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  Tensor x = builder.input("images", {16, 10, 10});
  const double elements = 2.0 * 16 * 10 * 10;

  Tensor bn = builder.batch_norm("bn", x);
  EXPECT_EQ(graph.op(bn.op).type, "FusedBatchNorm");
  EXPECT_DOUBLE_EQ(graph.op(bn.op).parameter_count, 2 * 16);  // gamma and beta; not running stats
  EXPECT_DOUBLE_EQ(graph.op(bn.op).forward_flops, 5 * elements);
  EXPECT_DOUBLE_EQ(graph.op(bn.op).backward_flops, 5 * elements);
  // Training passes over the 3,200 elements: forward reads x for the statistics, reads it again
  // and writes y (3); backward reads x and dy for the sums, again for dx, and writes dx (5). The
  // 32 parameters are read forward, read and their gradients written backward.
  const double parameter_bytes = 2 * 16 * kFloat32Bytes;
  EXPECT_DOUBLE_EQ(graph.op(bn.op).batch_statistics_bytes, elements * kFloat32Bytes);
  EXPECT_DOUBLE_EQ(graph.op(bn.op).forward_bytes, 3 * elements * kFloat32Bytes + parameter_bytes);
  EXPECT_DOUBLE_EQ(graph.op(bn.op).backward_bytes, 5 * elements * kFloat32Bytes + 2 * parameter_bytes);
  EXPECT_DOUBLE_EQ(graph.op(bn.op).inference_forward_bytes(), 2 * elements * kFloat32Bytes + parameter_bytes);
  EXPECT_DOUBLE_EQ(graph.op(builder.layer_norm("rows", x).op).batch_statistics_bytes, 0);  // its rows stay on chip

  Tensor relu = builder.relu("relu", bn);
  EXPECT_DOUBLE_EQ(graph.op(relu.op).forward_flops, elements);
  EXPECT_DOUBLE_EQ(graph.op(relu.op).forward_bytes, 2 * elements * kFloat32Bytes);
  // ReluGrad reads dy and y and writes dx: 3 passes.
  EXPECT_DOUBLE_EQ(graph.op(relu.op).backward_bytes, 3 * elements * kFloat32Bytes);

  Tensor sum = builder.add("add", relu, x);
  EXPECT_EQ(graph.op(sum.op).type, "AddV2");
  EXPECT_DOUBLE_EQ(graph.op(sum.op).forward_bytes, 3 * elements * kFloat32Bytes);
  // Its gradient is dy itself, for both inputs: no kernel.
  EXPECT_DOUBLE_EQ(graph.op(sum.op).backward_bytes, 0);
  EXPECT_DOUBLE_EQ(graph.op(sum.op).backward_flops, 0);
  // Dropout's backward reads dy and the mask and writes dx: 3 passes.
  EXPECT_DOUBLE_EQ(graph.op(builder.dropout("drop", sum).op).backward_bytes, 3 * elements * kFloat32Bytes);
  EXPECT_EQ(graph.inputs(sum.op).size(), 2u);

  // 3x3 max pool, stride 2, pad 1: floor((10 + 2 - 3) / 2) + 1 = 5; 9 comparisons per output.
  Tensor pool = builder.max_pool("pool", sum, {3, 2, 1});
  EXPECT_EQ(pool.shape, (std::vector<int64_t>{2, 16, 5, 5}));
  EXPECT_DOUBLE_EQ(graph.op(pool.op).forward_flops, 2.0 * 16 * 5 * 5 * 9);

  Tensor gap = builder.global_avg_pool("gap", pool);
  EXPECT_EQ(gap.shape, (std::vector<int64_t>{2, 16}));
  EXPECT_DOUBLE_EQ(graph.op(gap.op).forward_flops, 2.0 * 16 * 5 * 5);

  Tensor concat = builder.concat("concat", {pool, pool});
  EXPECT_EQ(concat.shape, (std::vector<int64_t>{2, 32, 5, 5}));
  // Reads two 800-element inputs, writes 1,600; backward slices dy into the two gradients: the same.
  EXPECT_DOUBLE_EQ(graph.op(concat.op).forward_bytes, 2 * 2.0 * 16 * 5 * 5 * kFloat32Bytes * 2);
  EXPECT_DOUBLE_EQ(graph.op(concat.op).backward_bytes, graph.op(concat.op).forward_bytes);
  EXPECT_DOUBLE_EQ(graph.op(concat.op).forward_flops, 0);

  Tensor flat = builder.flatten("flatten", pool);
  EXPECT_EQ(flat.shape, (std::vector<int64_t>{2, 400}));
  EXPECT_DOUBLE_EQ(graph.op(flat.op).forward_bytes, 0);  // metadata only

  Tensor ln = builder.layer_norm("ln", flat);
  EXPECT_DOUBLE_EQ(graph.op(ln.op).parameter_count, 2 * 400);
}

// Megatron-LM's bias_dropout_add: residual + dropout(x) in one kernel. Over 3,200 fp16 elements
// (6,400 bytes a tensor): forward reads x and the residual and writes the sum and a 1-byte mask,
// 3 x 6,400 + 3,200 bytes; backward reads dy and the mask and writes dx, 2 x 6,400 + 3,200 (the
// residual's gradient is dy itself). Separately, the dropout (2 passes forward, 3 backward) and
// the add (3 forward, none backward) move 5 x 6,400 forward and 3 x 6,400 backward.
TEST(LayerBuilderTest, FusedDropoutAddReadsBothInputsAndKeepsAMask) {
  OpGraph graph;
  constexpr double kFloat16Bytes = 2;
  LayerBuilder builder(graph, 2, kFloat16Bytes);
  Tensor x = builder.input("x", {16, 100});
  Tensor residual = builder.input("residual", {16, 100});
  const double elements = 2.0 * 16 * 100, tensor_bytes = elements * kFloat16Bytes;
  Tensor sum = builder.dropout_add("dropout_add", x, residual);
  const Op op = graph.op(sum.op);  // copies: the graph's ops move as more are added
  EXPECT_EQ(op.type, "DropoutAdd");
  EXPECT_EQ(sum.shape, x.shape);
  EXPECT_EQ(graph.inputs(sum.op).size(), 2u);
  EXPECT_DOUBLE_EQ(op.forward_flops, 2 * elements);  // the dropout's scale and the sum
  EXPECT_DOUBLE_EQ(op.forward_bytes, 3 * tensor_bytes + elements);
  EXPECT_DOUBLE_EQ(op.backward_flops, elements);
  EXPECT_DOUBLE_EQ(op.backward_bytes, 2 * tensor_bytes + elements);
  EXPECT_DOUBLE_EQ(op.parameter_count, 0);
  const Op dropout = graph.op(builder.dropout("dropout", x).op);
  const Op add = graph.op(builder.add("add", x, residual).op);
  EXPECT_DOUBLE_EQ(dropout.forward_bytes + add.forward_bytes, 5 * tensor_bytes);
  EXPECT_DOUBLE_EQ(dropout.backward_bytes + add.backward_bytes, 3 * tensor_bytes);
  EXPECT_THROW(builder.dropout_add("mismatch", x, builder.input("other", {16, 99})), ShapeError);
}

TEST(LayerBuilderTest, AttentionPiecesAreMatMuls) {
  // B = 2, S = 8, h = 16, 4 heads of 4.
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  builder.set_layer("h.0");
  Tensor ids = builder.input("ids", {8}, 4);
  Tensor x = builder.embedding("wte", ids, 100, 16);
  EXPECT_EQ(x.shape, (std::vector<int64_t>{2, 8, 16}));
  EXPECT_DOUBLE_EQ(graph.op(x.op).parameter_count, 100.0 * 16);
  EXPECT_EQ(graph.op(x.op).kind, OpKind::kEmbedding);

  Tensor qkv = builder.dense("qkv", x, 48);
  Tensor scores = builder.attention_scores("scores", qkv, 4);
  EXPECT_EQ(scores.shape, (std::vector<int64_t>{2, 4, 8, 8}));
  // MACs = B x heads x S x S x head_dim.
  EXPECT_DOUBLE_EQ(graph.op(scores.op).forward_flops, 2.0 * 2 * 4 * 8 * 8 * 4);
  EXPECT_EQ(graph.op(scores.op).kind, OpKind::kMatMul);
  // Q and K are two thirds of the fused projection.
  EXPECT_DOUBLE_EQ(graph.inputs(scores.op)[0].edge.bytes, 2.0 / 3.0 * graph.op(qkv.op).output_bytes);

  Tensor probs = builder.softmax("softmax", scores);
  EXPECT_DOUBLE_EQ(graph.op(probs.op).forward_flops, 5.0 * 2 * 4 * 8 * 8);
  Tensor context = builder.attention_context("context", probs, qkv, 4);
  EXPECT_EQ(context.shape, (std::vector<int64_t>{2, 8, 16}));
  EXPECT_DOUBLE_EQ(graph.op(context.op).forward_flops, 2.0 * 2 * 4 * 8 * 8 * 4);
  auto inputs = graph.inputs(context.op);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_DOUBLE_EQ(inputs[1].edge.bytes, 1.0 / 3.0 * graph.op(qkv.op).output_bytes);

  EXPECT_THROW(builder.attention_scores("bad", qkv, 3), ShapeError);  // 16 % 3 != 0

  Tensor labels = builder.input("labels", {8}, 4);
  Tensor logits = builder.dense("logits", context, 100);
  Tensor loss = builder.softmax_cross_entropy("loss", logits, labels);
  EXPECT_EQ(loss.shape, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(graph.op(loss.op).type, "SparseSoftmaxCrossEntropyWithLogits");
  EXPECT_DOUBLE_EQ(graph.op(loss.op).forward_flops, 6.0 * 2 * 8 * 100);
}

TEST(LayerBuilderTest, CrossAttentionAndRelativePositionBias) {
  // B = 2, 3 target tokens attend to 5 source tokens, h = 8 in 2 heads of 4.
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  builder.set_layer("dec.0");
  Tensor target = builder.input("target", {3, 8});
  Tensor source = builder.input("source", {5, 8});
  Tensor scores = builder.cross_attention_scores("cross_scores", target, source, 2);
  EXPECT_EQ(scores.shape, (std::vector<int64_t>{2, 2, 3, 5}));
  // MACs = B x heads x Sq x Sk x head_dim.
  EXPECT_DOUBLE_EQ(graph.op(scores.op).forward_flops, 2.0 * 2 * 2 * 3 * 5 * 4);
  ASSERT_TRUE(graph.op(scores.op).kernel);
  const GemmShape& gemm = graph.op(scores.op).kernel->gemm;
  EXPECT_EQ(gemm.batch, 4);
  EXPECT_EQ(gemm.m, 3);
  EXPECT_EQ(gemm.n, 5);
  EXPECT_EQ(gemm.k, 4);

  Tensor biased = builder.relative_position_bias("position_bias", scores, 32, /*owns_table=*/true);
  EXPECT_DOUBLE_EQ(graph.op(biased.op).parameter_count, 32.0 * 2);  // buckets x heads
  EXPECT_DOUBLE_EQ(graph.op(biased.op).forward_flops, 2.0 * 2 * 3 * 5);
  EXPECT_DOUBLE_EQ(graph.op(builder.relative_position_bias("reused", scores, 32, false).op).parameter_count, 0);

  Tensor context = builder.cross_attention_context("cross_context", builder.softmax("softmax", biased), source, 2);
  EXPECT_EQ(context.shape, (std::vector<int64_t>{2, 3, 8}));
  EXPECT_DOUBLE_EQ(graph.op(context.op).forward_flops, 2.0 * 2 * 3 * 8 * 5);  // B x Sq x h x Sk MACs
  EXPECT_THROW(builder.cross_attention_scores("bad", target, source, 3), ShapeError);  // 8 % 3 != 0
  EXPECT_THROW(builder.cross_attention_context("bad", scores, target, 2), ShapeError);  // 3 keys, not 5

  // Bahdanau's additive scores: 4u FLOPs per (query, key) pair; v, its scale and the bias.
  Tensor additive = builder.additive_attention_scores("scores", target, source);
  EXPECT_EQ(additive.shape, (std::vector<int64_t>{2, 1, 3, 5}));
  EXPECT_DOUBLE_EQ(graph.op(additive.op).forward_flops, 4.0 * 2 * 3 * 5 * 8);
  EXPECT_DOUBLE_EQ(graph.op(additive.op).parameter_count, 2.0 * 8 + 1);
}

TEST(LayerBuilderTest, SliceBiasAddAndTiedEmbedding) {
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  Tensor ids = builder.input("ids", {6}, 4);
  Tensor shared = builder.embedding("wte", ids, 50, 8);
  EXPECT_DOUBLE_EQ(graph.op(builder.embedding("tied", ids, 50, 8, /*tied=*/true).op).parameter_count, 0);
  Tensor cls = builder.slice("cls", shared, 1, 0, 1, /*squeeze=*/true);
  EXPECT_EQ(cls.shape, (std::vector<int64_t>{2, 8}));
  EXPECT_DOUBLE_EQ(graph.op(cls.op).forward_bytes, 2 * 2.0 * 8 * kFloat32Bytes);
  EXPECT_DOUBLE_EQ(graph.inputs(cls.op)[0].edge.bytes, 2.0 * 8 * kFloat32Bytes);  // only the slice is read
  EXPECT_THROW(builder.slice("bad", shared, 1, 5, 2, false), ShapeError);
  Tensor biased = builder.bias_add("bias", shared);
  EXPECT_DOUBLE_EQ(graph.op(biased.op).parameter_count, 8);
  EXPECT_DOUBLE_EQ(graph.op(biased.op).forward_flops, 2.0 * 6 * 8);
}

TEST(LayerBuilderTest, LstmIsItsGemmsAndGateSteps) {
  // B = 2, T = 3 steps, 5 inputs, hidden 4 (16 gate rows).
  OpGraph graph;
  LayerBuilder builder(graph, 2, kFloat32Bytes);
  builder.set_layer("enc.0");
  Tensor x = builder.input("x", {3, 5});
  const OpId first = static_cast<OpId>(graph.size());
  Tensor y = builder.lstm("bw", x, 4, /*reverse=*/true);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 3, 4}));
  // input projection + 3 x (recurrent GEMM + cell) + the stacked outputs.
  EXPECT_EQ(graph.size() - first, 1u + 3 * 2 + 1);

  const Op& input = graph.op(graph.find("enc.0/bw/input"));
  EXPECT_DOUBLE_EQ(input.forward_flops, 2.0 * (2 * 3) * 5 * 16);  // [B T, in] x [in, 4h]
  EXPECT_DOUBLE_EQ(input.parameter_count, 16.0 * 5 + 2 * 16);      // W_ih, b_ih, b_hh

  double recurrent_parameters = 0, cell_flops = 0;
  for (int t = 0; t < 3; ++t) {
    const Op& step = graph.op(graph.find("enc.0/bw/step_" + std::to_string(t)));
    EXPECT_DOUBLE_EQ(step.forward_flops, 2.0 * 2 * 4 * 16);  // [B, h] x [h, 4h]
    ASSERT_TRUE(step.kernel);
    EXPECT_EQ(step.kernel->gemm.m, 2);
    EXPECT_EQ(step.kernel->gemm.n, 16);
    EXPECT_EQ(step.kernel->gemm.k, 4);
    recurrent_parameters += step.parameter_count;
    cell_flops += graph.op(graph.find("enc.0/bw/cell_" + std::to_string(t))).forward_flops;
  }
  EXPECT_DOUBLE_EQ(recurrent_parameters, 16.0 * 4);  // W_hh, once
  EXPECT_DOUBLE_EQ(cell_flops, 3 * kLstmCellFlopsPerUnit * 2 * 4);
  // The reverse direction starts at the last step: its GEMM owns W_hh and has no h_{t-1}; step 1
  // reads the cell of step 2.
  const OpId last_step = graph.find("enc.0/bw/step_2");
  EXPECT_DOUBLE_EQ(graph.op(last_step).parameter_count, 16.0 * 4);
  ASSERT_EQ(graph.inputs(last_step).size(), 1u);
  EXPECT_TRUE(graph.inputs(last_step)[0].edge.control);
  const auto middle_inputs = graph.inputs(graph.find("enc.0/bw/step_1"));
  ASSERT_EQ(middle_inputs.size(), 1u);
  EXPECT_EQ(middle_inputs[0].op, graph.find("enc.0/bw/cell_2"));
}

}  // namespace
}  // namespace placesim
