#include "sim/graph/gradient_sums.h"

namespace placesim {

double gradient_sum_bytes(const OpGraph& graph, OpId producer) {
  const Op& op = graph.op(producer);
  // A variable's readers are its read op and its initialiser (TensorFlow's Assign, which has no
  // gradient); a variable read twice is summed at its read op.
  if (!(op.output_bytes > 0) || op.kind == OpKind::kVariable) return 0;
  int gradients = 0;
  double partial_bytes = 0;
  for (const auto& output : graph.outputs(producer)) {
    if (output.edge.control || !(output.edge.bytes > 0) || graph.op(output.op).kind == OpKind::kNoOp) continue;
    ++gradients;
    partial_bytes += output.edge.bytes;
  }
  constexpr double kDisjointTolerance = 1e-9;  // thirds of a width add up to it up to rounding
  if (gradients < 2 || partial_bytes <= op.output_bytes * (1 + kDisjointTolerance)) return 0;
  return partial_bytes + op.output_bytes;
}

void add_gradient_sums(OpGraph& graph) {
  for (OpId v = 0; v < graph.size(); ++v) {
    const double bytes = gradient_sum_bytes(graph, v);
    Op& op = graph.mutable_op(v);
    op.backward_bytes += bytes - op.gradient_sum_bytes;
    op.gradient_sum_bytes = bytes;
  }
}

}  // namespace placesim
