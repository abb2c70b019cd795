// Gradient sums where a tensor feeds several ops, against bytes counted by hand.
#include "sim/graph/gradient_sums.h"

#include <gtest/gtest.h>

namespace placesim {
namespace {

Op op_of(const std::string& name, double output_bytes, OpKind kind = OpKind::kElementwise) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.output_bytes = output_bytes;
  op.forward_bytes = 2 * output_bytes;
  op.backward_bytes = 3 * output_bytes;
  return op;
}

// A residual block's input feeds its first layer and the skip connection: TensorFlow's AddN
// reads the two 100-byte gradients and writes their sum, 300 bytes, in the producer's backward.
TEST(GradientSums, TwoConsumersOfTheWholeTensorAreSummed) {
  OpGraph graph;
  const OpId x = graph.add_op(op_of("x", 100));
  const OpId branch = graph.add_op(op_of("branch", 100));
  const OpId skip = graph.add_op(op_of("skip", 100));
  graph.add_edge(x, branch, 100);
  graph.add_edge(x, skip, 100);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, x), 300);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, branch), 0);  // one consumer or none: nothing to sum

  add_gradient_sums(graph);
  EXPECT_DOUBLE_EQ(graph.op(x).gradient_sum_bytes, 300);
  EXPECT_DOUBLE_EQ(graph.op(x).backward_bytes, 3 * 100 + 300);
  add_gradient_sums(graph);  // a graph already summed (imported from placesim's ONNX) stays
  EXPECT_DOUBLE_EQ(graph.op(x).backward_bytes, 3 * 100 + 300);

  // A fourth-reader Inception block: four 100-byte gradients read, one written.
  const OpId third = graph.add_op(op_of("third", 100));
  const OpId fourth = graph.add_op(op_of("fourth", 100));
  graph.add_edge(x, third, 100);
  graph.add_edge(x, fourth, 100);
  add_gradient_sums(graph);
  EXPECT_DOUBLE_EQ(graph.op(x).gradient_sum_bytes, 500);
  EXPECT_DOUBLE_EQ(graph.op(x).backward_bytes, 3 * 100 + 500);
}

// A fused QKV projection's readers take disjoint parts (Q and K: two thirds; V: one third):
// their gradients fill the projection's gradient side by side. A control edge and a noop
// consumer pass no gradient.
TEST(GradientSums, DisjointPartsControlEdgesAndNoopsSumNothing) {
  OpGraph graph;
  const OpId qkv = graph.add_op(op_of("qkv", 300));
  const OpId scores = graph.add_op(op_of("scores", 50));
  const OpId context = graph.add_op(op_of("context", 50));
  graph.add_edge(qkv, scores, 200);
  graph.add_edge(qkv, context, 100);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, qkv), 0);

  OpGraph fan;
  const OpId y = fan.add_op(op_of("y", 100));
  const OpId reader = fan.add_op(op_of("reader", 100));
  const OpId after = fan.add_op(op_of("after", 100));
  const OpId marker = fan.add_op(op_of("marker", 100, OpKind::kNoOp));
  fan.add_edge(y, reader, 100);
  fan.add_control_edge(y, after);
  fan.add_edge(y, marker, 100);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(fan, y), 0);
}

}  // namespace
}  // namespace placesim
