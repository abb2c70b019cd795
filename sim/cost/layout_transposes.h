// The NCHW <-> NHWC transposes cuDNN runs around a tensor-core convolution when the framework keeps
// activations in NCHW: tensor-core kernels work in NHWC, so it transposes the tensors each pass
// reads and writes (NVIDIA, "Convolutional Layers User's Guide", "Tensor Layouts In Memory: NCHW
// vs NHWC"). Which tensors, per pass, from a measured A100 trace (docs/cost-model.md).
#pragma once

#include "sim/cluster/device_spec.h"
#include "sim/core/memory_format.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

/// Bytes the transposes read and write for `task` (a convolution with a kernel shape; 0 for
/// anything else, under NHWC, off tensor cores (DeviceSpec::runs_convolutions_on_tensor_cores),
/// and for a 1x1 stride-1 convolution, which cuDNN runs as a GEMM on the NCHW tensors). Each
/// transposed tensor is read once and written once: forward, the input and the filter; backward
/// data, the output gradient, the filter and the input gradient; backward filter, the input, the
/// filter gradient and, without a data pass, the output gradient.
double layout_transpose_bytes(const Task& task, Precision precision, MemoryFormat format, const DeviceSpec& spec);

/// Their time: the bytes at 0.714 of the bandwidth the device's elementwise kernels reach (the
/// kernel model's fraction when it has one), as measured on an A100 (layout_transposes.cpp). No
/// per-kernel floor.
double layout_transpose_seconds(const Task& task, Precision precision, MemoryFormat format, const DeviceSpec& spec);

}  // namespace placesim
