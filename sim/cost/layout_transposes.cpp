#include "sim/cost/layout_transposes.h"

namespace placesim {
namespace {

/// Transposes reach this fraction of the bandwidth a device's elementwise kernels reach (strided
/// reads or writes). Measured: the 3x3, 7x7 and strided convolutions' nchwToNhwc / nhwcToNchw
/// kernels of HolisticTraceAnalysis's ResNet-50 trace (A100 SXM4 40 GB, TF32, batch 32, 3 steps;
/// docs/validation.md) move the bytes layout_transpose_bytes counts at 1,000.8 GB/s (forward
/// 1,039, backward 987), against 1,555 GB/s x 0.901, the board's fitted elementwise fraction.
constexpr double kTransposeRelativeEfficiency = 1000.8 / (1555.0 * 0.901);

}  // namespace

double layout_transpose_bytes(const Task& task, Precision precision, MemoryFormat format, const DeviceSpec& spec) {
  if (format != MemoryFormat::kNchw || !task.kernel || task.kernel->kind != KernelKind::kConv2d ||
      task.kernel_passes == 0 || !spec.runs_convolutions_on_tensor_cores(precision)) {
    return 0;
  }
  const Conv2dShape c = task.kernel->with_samples(task.kernel_samples).conv;
  if (c.r == 1 && c.s == 1 && c.stride_h == 1 && c.stride_w == 1) return 0;
  const double element = element_bytes(precision);
  const double input = element * static_cast<double>(c.n * c.c * c.h * c.w);
  const double output = element * static_cast<double>(c.n * c.k * c.p() * c.q());
  const double filter = element * static_cast<double>(c.k * (c.c / c.groups) * c.r * c.s);
  double tensors = 0;  // bytes of the tensors transposed, each read and written once
  if (task.kernel_passes & kForwardPass) tensors += input + filter;
  if (task.kernel_passes & kBackwardDataPass) tensors += output + filter + input;
  if (task.kernel_passes & kBackwardFilterPass) {
    tensors += input + filter + ((task.kernel_passes & kBackwardDataPass) ? 0 : output);
  }
  return 2 * tensors;
}

double layout_transpose_seconds(const Task& task, Precision precision, MemoryFormat format, const DeviceSpec& spec) {
  const double bytes = layout_transpose_bytes(task, precision, format, spec);
  if (bytes <= 0) return 0;
  return bytes / (spec.memory_bandwidth_bytes_per_second * spec.step_memory_efficiency_for(OpKind::kElementwise) *
                  kTransposeRelativeEfficiency);
}

}  // namespace placesim
