// Kernel shapes in model and plan files: {"gemm": {...}} or {"conv2d": {...}} (docs/model-graphs.md).
#pragma once

#include "sim/core/json_reader.h"
#include "sim/graph/kernel_shape.h"

namespace placesim {

/// Reads a "kernel" object; every dimension is range-checked (sizes >= 1, strides >= 1,
/// padding >= 0, groups dividing both channel counts, an output of at least 1 x 1).
KernelShape read_kernel_shape(const JsonReader& kernel);
Json write_kernel_shape(const KernelShape& kernel);

}  // namespace placesim
