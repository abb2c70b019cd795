// OpGraph's copies share their ops and edges until one of them changes (copy on write).
#include "sim/graph/op_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace placesim {
namespace {

OpGraph two_ops() {
  OpGraph graph("two");
  Op a;
  a.name = "a";
  a.output_bytes = 8;
  Op b;
  b.name = "b";
  const OpId from = graph.add_op(a);
  const OpId to = graph.add_op(b);
  graph.add_edge(from, to);
  return graph;
}

TEST(OpGraph, ACopySharesItsOpsUntilOneOfThemChanges) {
  const OpGraph original = two_ops();
  OpGraph copy = original;
  EXPECT_EQ(&copy.op(0), &original.op(0));  // shared, not copied

  copy.mutable_op(0).forward_flops = 5;
  Op c;
  c.name = "c";
  const OpId added = copy.add_op(c);
  copy.add_edge(1, added);
  EXPECT_NE(&copy.op(0), &original.op(0));
  EXPECT_EQ(copy.op(0).forward_flops, 5);
  EXPECT_EQ(original.op(0).forward_flops, 0);
  EXPECT_EQ(copy.size(), 3u);
  EXPECT_EQ(original.size(), 2u);
  EXPECT_EQ(original.outputs(1).size(), 0u);
  EXPECT_EQ(copy.outputs(1).size(), 1u);
  EXPECT_EQ(original.find("c"), original.size());
  EXPECT_EQ(copy.find("c"), 2u);
  ASSERT_EQ(original.outputs(0).size(), 1u);
  EXPECT_EQ(original.outputs(0).front().edge.bytes, 8);  // the producer's output bytes
}

TEST(OpGraph, AnOpChangedBeforeACopyIsTheCopysToo) {
  OpGraph graph = two_ops();
  graph.mutable_op(1).forward_flops = 7;
  const OpGraph copy = graph;
  EXPECT_EQ(copy.op(1).forward_flops, 7);
  graph.mutable_op(1).forward_flops = 9;  // graph stops sharing first
  EXPECT_EQ(copy.op(1).forward_flops, 7);
  EXPECT_EQ(graph.op(1).forward_flops, 9);
}

TEST(OpGraph, AMovedFromGraphIsEmptyAndCanBeFilledAgain) {
  OpGraph graph = two_ops();
  OpGraph moved = std::move(graph);
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_EQ(graph.size(), 0u);  // NOLINT(bugprone-use-after-move): the documented state
  EXPECT_FALSE(graph.contains("a"));
  Op a;
  a.name = "a";
  EXPECT_EQ(graph.add_op(a), 0u);
  EXPECT_EQ(graph.size(), 1u);
  OpGraph other = two_ops();
  other = std::move(graph);
  EXPECT_EQ(other.size(), 1u);
  EXPECT_EQ(graph.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_EQ(OpGraph().size(), 0u);  // the shared empty data was never changed
}

/// a -> b -> d, a -> c -> d, with an edge's bytes telling it apart.
OpGraph diamond() {
  OpGraph graph("diamond");
  for (const char* name : {"a", "b", "c", "d"}) {
    Op op;
    op.name = name;
    graph.add_op(op);
  }
  graph.add_edge(0, 1, 1);
  graph.add_edge(0, 2, 2);
  graph.add_edge(1, 3, 3);
  graph.add_edge(2, 3, 4);
  return graph;
}

std::vector<std::pair<OpId, double>> listed(const OpGraph::Neighbors& neighbors) {
  std::vector<std::pair<OpId, double>> result;
  for (const auto& neighbor : neighbors) result.emplace_back(neighbor.op, neighbor.edge.bytes);
  return result;
}

TEST(OpGraph, AFinishedGraphKeepsItsOrderAndNeighboursUntilAnOpOrEdgeIsAdded) {
  OpGraph graph = diamond();
  std::vector<OpId> order;
  ASSERT_TRUE(graph.topological_order(&order, nullptr));
  EXPECT_EQ(order, (std::vector<OpId>{0, 1, 2, 3}));
  // Asked again (now from the kept layout): the same order and the same neighbours, in edge order.
  std::vector<OpId> again{7};
  ASSERT_TRUE(graph.topological_order(&again, nullptr));
  EXPECT_EQ(again, order);
  using Listed = std::vector<std::pair<OpId, double>>;
  EXPECT_EQ(listed(graph.inputs(3)), (Listed{{1, 3.0}, {2, 4.0}}));
  EXPECT_EQ(listed(graph.outputs(0)), (Listed{{1, 1.0}, {2, 2.0}}));
  EXPECT_TRUE(graph.inputs(0).empty());
  EXPECT_TRUE(graph.outputs(3).empty());

  // A copy shares it; a copy that changes sees its change, the original keeps its own.
  const OpGraph original = graph;
  Op e;
  e.name = "e";
  const OpId added = graph.add_op(e);
  graph.add_edge(added, 1, 5);  // e now comes before b
  ASSERT_TRUE(graph.topological_order(&order, nullptr));
  EXPECT_EQ(order, (std::vector<OpId>{0, 2, 4, 1, 3}));
  EXPECT_EQ(listed(graph.inputs(1)), (Listed{{0, 1.0}, {4, 5.0}}));
  ASSERT_TRUE(original.topological_order(&order, nullptr));
  EXPECT_EQ(order, (std::vector<OpId>{0, 1, 2, 3}));
  EXPECT_EQ(listed(original.inputs(1)), (Listed{{0, 1.0}}));

  // A control edge too, and a cycle is still found (an order is only kept without one).
  graph.add_control_edge(3, 0);
  std::vector<std::string> cycle;
  EXPECT_FALSE(graph.topological_order(&order, &cycle));
  EXPECT_FALSE(cycle.empty());
  ASSERT_EQ(graph.inputs(0).size(), 1u);
  EXPECT_TRUE(graph.inputs(0).front().edge.control);
}

TEST(NumberedLayerPrefix, IsWhatComesBeforeTheLastDotWhenDigitsFollowIt) {
  EXPECT_EQ(numbered_layer_prefix("h.12"), "h");
  EXPECT_EQ(numbered_layer_prefix("encoder.layer.3"), "encoder.layer");
  EXPECT_EQ(numbered_layer_prefix("ln_f"), "");
  EXPECT_EQ(numbered_layer_prefix("h.1a"), "");
  EXPECT_EQ(numbered_layer_prefix("h."), "");
  EXPECT_EQ(numbered_layer_prefix(".3"), "");
}

}  // namespace
}  // namespace placesim
