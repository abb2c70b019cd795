#include "sim/graph/layer_costs.h"

namespace placesim {

double gemm_forward_flops(double macs) { return 2 * macs; }

double pooling_flops(double output_elements, double window_elements) { return output_elements * window_elements; }

double backward_flops(OpKind kind, double forward_flops) {
  return is_gemm_kind(kind) ? 2 * forward_flops : forward_flops;
}

double backward_bytes(double forward_bytes) { return 2 * forward_bytes; }

void set_backward_costs(Op& op, GradientKernel gradient) {
  op.backward_flops = gradient == GradientKernel::kIdentity ? 0 : backward_flops(op.kind, op.forward_flops);
  switch (gradient) {
    case GradientKernel::kGeneric: op.backward_bytes = backward_bytes(op.forward_bytes); break;
    case GradientKernel::kUnaryElementwise: op.backward_bytes = op.forward_bytes + op.output_bytes; break;
    case GradientKernel::kIdentity: op.backward_bytes = 0; break;
    case GradientKernel::kSlices: op.backward_bytes = op.forward_bytes; break;
  }
}

void add_batch_statistics_passes(Op& op, double input_bytes) {
  op.batch_statistics_bytes = input_bytes;
  op.forward_bytes += input_bytes;
  op.backward_bytes += input_bytes;
}

void set_embedding_costs(Op& op, double id_bytes, double output_elements) {
  op.forward_flops = 0;
  op.forward_bytes = id_bytes + 2 * op.output_bytes;
  op.backward_flops = output_elements;
  op.backward_bytes = backward_bytes(op.forward_bytes);
}

}  // namespace placesim
