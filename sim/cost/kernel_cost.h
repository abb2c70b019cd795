// Kernel-level cost of a compute task on a device that has a fitted kernel model: the sum of
// the task's kernels (GEMM tiles and waves, the fastest convolution algorithm per pass) or, for
// an op without a kernel shape, a memory-bound roofline with the fitted bandwidth efficiency and
// fixed cost. Results are cached per (model, shape, passes, precision). docs/cost-model.md.
#pragma once

#include "sim/cluster/device_spec.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

/// Seconds of the task's kernels on `spec`, before speed factors and jitter; requires
/// spec.kernel_model.
double kernel_model_seconds(const Task& task, Precision precision, const DeviceSpec& spec);

/// Under which load a kernel runs: a training step's, sustained at the board's power limit
/// (DeviceSpec::sustained_matmul), or a burst, as kernel tables are timed.
enum class KernelLoad { kSustained, kBurst };

/// The GEMM model's time for the work of a fused attention kernel (before its fitted
/// efficiency): forward Q K^T and P V; backward the scores again, dP, dV, dQ and dK; with a
/// causal mask each on half the keys; under `load` (a step's; a burst to fit measured kernels).
/// Requires spec.kernel_model.
double attention_gemm_seconds(const AttentionShape& attention, bool forward, Precision precision, const DeviceSpec& spec,
                              KernelLoad load = KernelLoad::kSustained);

}  // namespace placesim
