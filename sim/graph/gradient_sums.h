// Where a tensor feeds several ops, its gradient is the sum of theirs: the backward of the op
// that produced it sums them first (TensorFlow's AddN in gradients_impl.py's _AggregatedGrads,
// PyTorch autograd's accumulation), and that sum moves bytes no other rule counts.
#pragma once

#include "sim/graph/op_graph.h"

namespace placesim {

/// Bytes the backward of `producer` spends summing the gradients its consumers return: each
/// partial gradient read (an edge's bytes) and the sum written (the output), when two or more
/// consumers (data edges; `noop` ops pass no gradient) read overlapping parts of the output (the
/// QKV projection's three readers take disjoint thirds: nothing to sum); 0 otherwise, and 0 for a
/// variable (its gradient is summed at its read op). Charged
/// only where the planner runs the producer's backward (an input's gradient is never computed).
double gradient_sum_bytes(const OpGraph& graph, OpId producer);

/// Sets every op's Op::gradient_sum_bytes to the above and its backward_bytes by the difference,
/// so a graph already summed (an ONNX file placesim exported) is left as it is.
void add_gradient_sums(OpGraph& graph);

}  // namespace placesim
