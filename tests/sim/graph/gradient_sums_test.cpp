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

/// Adds an op named `name` that reads `edge_bytes` of `from`'s output.
OpId add_reader(OpGraph& graph, OpId from, const std::string& name, double edge_bytes,
                OpKind kind = OpKind::kElementwise) {
  const OpId reader = graph.add_op(op_of(name, 100, kind));
  graph.add_edge(from, reader, edge_bytes);
  return reader;
}

// A residual block's input feeds its first layer and the skip connection: TensorFlow's AddN
// reads the two 100-byte gradients and writes their sum, 300 bytes, in the producer's backward.
TEST(GradientSums, TwoConsumersOfTheWholeTensorAreSummed) {
  OpGraph graph;
  const OpId x = graph.add_op(op_of("x", 100));
  const OpId branch = add_reader(graph, x, "branch", 100);
  add_reader(graph, x, "skip", 100);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, x), 300);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, branch), 0);  // one consumer or none: nothing to sum

  add_gradient_sums(graph);
  EXPECT_DOUBLE_EQ(graph.op(x).gradient_sum_bytes, 300);
  EXPECT_DOUBLE_EQ(graph.op(x).backward_bytes, 3 * 100 + 300);
  add_gradient_sums(graph);  // a graph already summed (imported from placesim's ONNX) stays
  EXPECT_DOUBLE_EQ(graph.op(x).backward_bytes, 3 * 100 + 300);

  // An Inception block's input has four readers: four 100-byte gradients read, the sum written.
  add_reader(graph, x, "third", 100);
  add_reader(graph, x, "fourth", 100);
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
  add_reader(graph, qkv, "scores", 200);
  add_reader(graph, qkv, "context", 100);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(graph, qkv), 0);

  OpGraph fan;
  const OpId y = fan.add_op(op_of("y", 100));
  add_reader(fan, y, "reader", 100);
  fan.add_control_edge(y, fan.add_op(op_of("after", 100)));
  add_reader(fan, y, "marker", 100, OpKind::kNoOp);
  EXPECT_DOUBLE_EQ(gradient_sum_bytes(fan, y), 0);
}

}  // namespace
}  // namespace placesim
