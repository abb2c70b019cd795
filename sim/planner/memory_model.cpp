#include "sim/planner/memory_model.h"

#include "sim/plan/kernel_precision.h"
#include "sim/planner/plan_builder.h"

namespace placesim {

bool mixed_precision(Precision precision) {
  return precision == Precision::kFp16 || precision == Precision::kBf16 || precision == Precision::kFp8;
}

double fp8_weight_cache_bytes_per_parameter(const Op& op, Precision precision) {
  if (kernel_precision(precision, op.kind, op.kernel.get()) != Precision::kFp8) return 0;
  constexpr double kFp8WeightBytes = 1;     // the FP8 copy the forward GEMM reads
  constexpr double kFp8TransposeBytes = 1;  // its transpose, for the backward data GEMM on Hopper
  return kFp8WeightBytes + kFp8TransposeBytes;
}

double optimizer_state_bytes_per_parameter(Optimizer optimizer, Precision precision, double dtype_bytes) {
  const double copies = optimizer_cost(optimizer, dtype_bytes).state_copies;
  if (!mixed_precision(precision)) return copies * dtype_bytes;
  constexpr double kFp32Bytes = 4;  // master weights and moments stay in fp32
  return kFp32Bytes + copies * kFp32Bytes;
}

double gradient_element_bytes(const RunOptions& run, double dtype_bytes) {
  constexpr double kFp32Bytes = 4;
  return run.fp32_gradients && mixed_precision(run.precision) ? kFp32Bytes : dtype_bytes;
}

double gradient_bytes(const Op& op, const RunOptions& run) {
  return op.parameter_count * gradient_element_bytes(run, op.dtype_bytes);
}

StaticMemory op_static_memory(const Op& op, const RunOptions& run) {
  StaticMemory memory;
  memory.parameter_bytes = op.parameter_bytes() + op.parameter_count * fp8_weight_cache_bytes_per_parameter(op, run.precision);
  if (run.kind == StepKind::kTraining && op.parameter_count > 0) {
    memory.gradient_bytes = gradient_bytes(op, run);
    memory.optimizer_state_bytes =
        op.parameter_count * optimizer_state_bytes_per_parameter(run.optimizer, run.precision, op.dtype_bytes);
  }
  return memory;
}

void add_static_memory(StaticMemory* into, const StaticMemory& more) {
  into->parameter_bytes += more.parameter_bytes;
  into->gradient_bytes += more.gradient_bytes;
  into->optimizer_state_bytes += more.optimizer_state_bytes;
}

bool crosses_layers(const OpGraph& graph, OpId from, OpId to) {
  const std::string& a = graph.op(from).layer;
  const std::string& b = graph.op(to).layer;
  return !a.empty() && !b.empty() && a != b;
}

}  // namespace placesim
