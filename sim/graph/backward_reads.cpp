#include "sim/graph/backward_reads.h"

#include <unordered_map>

namespace placesim {

BackwardReads backward_reads(const std::string& op_type) {
  constexpr BackwardReads kInputs{true, false}, kOutput{false, true}, kNothing{false, false};
  // TensorFlow 1.x gradient functions (tensorflow/python/ops/*_grad.py):
  static const std::unordered_map<std::string, BackwardReads> table = {
      // nn_grad.py: _ReluGrad / _Relu6Grad / _EluGrad / _SoftmaxGrad pass op.outputs[0];
      // math_grad.py: _SigmoidGrad and _TanhGrad use y = op.outputs[0].
      {"Relu", kOutput}, {"Relu6", kOutput}, {"Elu", kOutput}, {"Softmax", kOutput},
      {"Sigmoid", kOutput}, {"Tanh", kOutput},
      // The softmax cross entropy computes its gradient in forward (its second output).
      {"SparseSoftmaxCrossEntropyWithLogits", kOutput}, {"SoftmaxCrossEntropyWithLogits", kOutput},
      // Conv2DBackpropFilter reads the input (BackpropInput the filter, a variable); MatMul's
      // gradients read the other operand; FusedBatchNormGrad reads x and the saved statistics.
      {"Conv2D", kInputs}, {"DepthwiseConv2dNative", kInputs}, {"MatMul", kInputs}, {"BatchMatMul", kInputs},
      {"BatchMatMulV2", kInputs}, {"FusedBatchNorm", kInputs}, {"FusedBatchNormV3", kInputs}, {"Mul", kInputs},
      // Sums, bias adds, concatenations, reshapes and averages need only shapes.
      {"Add", kNothing}, {"AddV2", kNothing}, {"AddN", kNothing}, {"BiasAdd", kNothing}, {"ConcatV2", kNothing},
      {"Reshape", kNothing}, {"Identity", kNothing}, {"Squeeze", kNothing}, {"AvgPool", kNothing}, {"Mean", kNothing},
      // MaxPoolGrad(orig_input, orig_output, grad) reads both: the default.
  };
  auto found = table.find(op_type);
  return found == table.end() ? BackwardReads{} : found->second;
}

}  // namespace placesim
