#include "sim/cost/fp8_casts.h"

#include "sim/plan/kernel_precision.h"

namespace placesim {

Fp8Casts fp8_casts(const Task& task, Precision precision) {
  Fp8Casts casts;
  // Only the GEMMs that compute in FP8 (kernel_precision.h): not attention's, not the output layer's.
  if (!task.kernel || task.kernel->kind != KernelKind::kGemm ||
      kernel_precision(precision, task.op_kind, task.kernel.get()) != Precision::kFp8) {
    return casts;
  }
  const GemmShape gemm = task.kernel->with_samples(task.kernel_samples).gemm;
  const double batch = static_cast<double>(gemm.batch);
  const double input = batch * static_cast<double>(gemm.m) * static_cast<double>(gemm.k);
  const double output = batch * static_cast<double>(gemm.m) * static_cast<double>(gemm.n);
  const double cast_transpose = element_bytes(Precision::kBf16) + 2 * gemm_operand_bytes(Precision::kFp8);
  const double transpose = 2 * gemm_operand_bytes(Precision::kFp8);
  auto add = [&](double elements, double bytes_per_element) {
    casts.bytes += elements * bytes_per_element;
    ++casts.kernels;
  };
  if ((task.kernel_passes & kForwardPass) && !gemm.input_from_normalization) add(input, cast_transpose);
  if (task.kernel_passes & kBackwardPasses) {
    add(output, cast_transpose);
    if (gemm.input_from_normalization) add(input, transpose);
  }
  return casts;
}

double fp8_cast_seconds(const Task& task, Precision precision, const DeviceSpec& spec) {
  const Fp8Casts casts = fp8_casts(task, precision);
  if (casts.kernels == 0) return 0;
  const double fixed_per_kernel = spec.kernel_model
                                      ? spec.kernel_model->memory_latency_seconds + spec.kernel_model->kernel_overhead_seconds
                                      : spec.kernel_launch_overhead_seconds;
  return casts.bytes / (spec.memory_bandwidth_bytes_per_second * spec.step_memory_efficiency_for(OpKind::kElementwise)) +
         casts.kernels * fixed_per_kernel;
}

}  // namespace placesim
