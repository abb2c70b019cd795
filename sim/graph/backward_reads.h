// BackwardReads: which forward tensors an op's gradient reads, by op type, as TensorFlow's
// gradient functions define them (tensorflow/python/ops/nn_grad.py, math_grad.py, array_grad.py):
// ReluGrad reads the ReLU's output, FusedBatchNormGrad and the convolution and matmul gradients
// read the op's inputs, MaxPoolGrad both, an add or a concat neither. What no gradient reads is
// freed once the forward no longer needs it (the memory model's activations).
#pragma once

#include <string>

namespace placesim {

struct BackwardReads {
  bool inputs = true;  ///< the op's forward inputs (e.g. a convolution's input image)
  bool output = true;  ///< the op's own forward output (e.g. a ReLU's)
};

/// Unknown types read both (the conservative choice: everything kept until its backward).
BackwardReads backward_reads(const std::string& op_type);

}  // namespace placesim
