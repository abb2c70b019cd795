// Checks of convolution and pooling nodes (Conv, ConvInteger, QLinearConv, ConvTranspose,
// MaxPool, AveragePool, LpPool, MaxUnpool) that ONNX 1.12's shape inference does not make: it
// divides by the strides (a stride of 0 kills the process with SIGFPE) and computes nonsense
// shapes from negative dilations, kernels of 0, rank-1 weights or a group of 0. The importer
// (onnx_import.cpp) calls the attribute check before shape inference and the shape check after
// it; each returns why the node is invalid, or "" when it is not. Internal to placesim_onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace placesim {

/// True for the operators these checks cover (in the default ONNX domain).
bool is_window_operator(const ::ONNX_NAMESPACE::NodeProto& node);

/// Index of the weight input of a convolution (1; QLinearConv: 3), -1 for pooling.
int window_weight_input(const ::ONNX_NAMESPACE::NodeProto& node);

/// Attributes alone: kernel_shape, strides and dilations at least 1, pads and output_padding at
/// least 0, output_shape at least 1, group at least 1, all at most 2^31 - 1, lists given as lists
/// of integers, auto_pad one of ONNX's four values, pooling with a kernel_shape.
std::string window_attribute_problem(const ::ONNX_NAMESPACE::NodeProto& node);

/// With the data input's shape `x` (and the weight's `w`, nullptr when unknown or pooling):
/// rank 3 or more, attribute lengths matching the spatial rank, a weight of the input's rank whose
/// kernel matches kernel_shape, channels divisible by the group, and every spatial output size
/// at least 1.
std::string window_shape_problem(const ::ONNX_NAMESPACE::NodeProto& node, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>* w);

/// Wraps ONNX's own shape inference of these operators (every registered opset version, once per
/// process) with the rank checks it lacks, for nodes whose input shapes are known only during
/// inference: with a weight of another rank than the input (or MaxUnpool indices of rank below 2)
/// it reads past the end of a shape and crashes (found by the ONNX fuzzer); the wrapper throws
/// ONNX's InferenceError instead.
void guard_window_shape_inference();

}  // namespace placesim
