// The cast kernels Transformer Engine runs around an FP8 GEMM of a linear layer: its bf16 input
// and output gradient quantized to FP8, each with an FP8 transposed copy for the weight-gradient
// GEMM (Hopper's FP8 tensor cores take only the "TN" layout). Read in NVIDIA/TransformerEngine
// v1.8 (3ec998e9), transformer_engine/pytorch/module/linear.py and base.py. docs/cost-model.md, "FP8 casts".
#pragma once

#include "sim/cluster/device_spec.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

/// What an FP8 linear layer's cast kernels move, for one task.
struct Fp8Casts {
  double bytes = 0;  ///< read + written
  int kernels = 0;   ///< separate kernel launches
};

/// For a GEMM task that computes in FP8 (kernel_precision.h: a linear layer's, not attention's
/// nor the output layer's, in an fp8 run); none for any other task. Per pass the task runs:
/// - forward: the input (m x k) cast and transposed in one kernel (fp8_cast_transpose_fused: 2
///   bytes read, 1 + 1 written per element), unless a normalization produced it
///   (GemmShape::input_from_normalization: TE's LayerNormLinear writes the norm's output in FP8);
/// - backward (either pass, once): the output gradient (m x n) cast and transposed likewise; for
///   a normalization's input, the FP8 copy transposed for the weight gradient (fp8_transpose:
///   1 byte read, 1 written per element).
/// Not counted: the weights' cast and transpose, once per step (TE caches them across
/// micro-batches: 4 bytes per weight per step), and the amax reductions.
Fp8Casts fp8_casts(const Task& task, Precision precision);

/// Their time: the bytes at the bandwidth fraction the device's elementwise kernels reach (its
/// kernel model's, else its profile's), plus each kernel's fixed cost (the kernel model's
/// memory-bound kernel overhead, else the profile's launch overhead).
double fp8_cast_seconds(const Task& task, Precision precision, const DeviceSpec& spec);

}  // namespace placesim
