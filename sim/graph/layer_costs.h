// The cost conventions of one op that the zoo's layer builder (models/) and the ONNX importer
// (sim/graph/onnx) share, so a layer costs the same whichever way it arrives (docs/model-graphs.md).
#pragma once

#include "sim/graph/op.h"

namespace placesim {

/// FLOPs per element of the ops that are not GEMMs; multiplies and adds count separately.
inline constexpr double kElementwiseFlopsPerElement = 1;        // activations, arithmetic, dropout
inline constexpr double kReductionFlopsPerInputElement = 1;     // reductions, global average pooling
inline constexpr double kNormalizationFlopsPerElement = 5;      // mean 1 + variance 2 + scale-and-shift 2
inline constexpr double kSoftmaxFlopsPerElement = 5;            // max, subtract, exp, sum, divide
inline constexpr double kCrossEntropyFlopsPerLogit = 6;         // softmax 5 + log of the picked class 1

/// Forward FLOPs of a convolution or matrix multiply of `macs` multiply-adds: 2 each (the bias add
/// is fused into the GEMM and not counted, so forward FLOPs / 2 are the published MACs).
double gemm_forward_flops(double macs);

/// Forward FLOPs of max or average pooling: 1 per window element per output element.
double pooling_flops(double output_elements, double window_elements);

/// Backward FLOPs of an op of `kind`: 2 x forward for GEMM kinds (input gradient + weight
/// gradient, charged for the first layer too), = forward for every other op.
double backward_flops(OpKind kind, double forward_flops);

/// Backward bytes of an op that moves data: 2 x forward (the backward kernels read the output
/// gradient and the saved inputs and write the input and weight gradients).
double backward_bytes(double forward_bytes);

/// The kernel an op's gradient runs, for what it moves.
enum class GradientKernel {
  /// Reads the output gradient and the saved inputs, writes the input and weight gradients:
  /// backward_bytes' rule, twice the forward.
  kGeneric,
  /// An activation or dropout: reads dy and one saved tensor (the input, or the output for ReLU,
  /// sigmoid and tanh; dropout its mask) and writes dx: 3 passes, forward_bytes + output_bytes.
  kUnaryElementwise,
  /// A sum of two tensors of one shape: its gradient is dy itself, passed to both inputs without
  /// a kernel (TensorFlow's _AddGrad returns (grad, grad) for fully specified equal shapes;
  /// PyTorch's AddBackward passes it on): no FLOPs, no bytes. Where the two gradients meet again,
  /// at the op that fed both branches, they are summed (gradient_sums.h).
  kIdentity,
  /// A concatenation: dy sliced into each input's gradient (TensorFlow's _ConcatGradHelper, a
  /// Slice per input, a copy on a GPU): dy read once, each input gradient written once, the
  /// forward's bytes.
  kSlices,
};

/// Sets `op`'s backward FLOPs (backward_flops, none for kIdentity) and bytes from its kind, its
/// forward costs and the kernel its gradient runs.
void set_backward_costs(Op& op, GradientKernel gradient = GradientKernel::kGeneric);

/// Adds a batch normalization's statistics passes to `op`'s costs (after set_backward_costs): in
/// a training step it reads its input of `input_bytes` once more in each direction, as cuDNN's and
/// PyTorch's training kernels do, because its statistics reduce over the whole batch, which no
/// kernel holds on chip: forward reduces the mean and variance before it normalises (x read twice,
/// y written: 3 passes), backward reduces the sums of dy and dy x-hat before it writes dx (x and dy
/// read twice, dx written: 5 passes). An inference step normalises with the running statistics
/// and does not read them (Op::inference_forward_bytes).
void add_batch_statistics_passes(Op& op, double input_bytes);

/// Costs of an embedding lookup (`op.output_bytes` set) reading `id_bytes` of ids: forward a copy
/// (0 FLOPs; the ids and the selected rows read, the rows written), backward a scatter-add of
/// 1 FLOP per output element into the table's gradient.
void set_embedding_costs(Op& op, double id_bytes, double output_elements);

}  // namespace placesim
