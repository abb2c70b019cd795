// Convolution time as the fastest eligible cuDNN-style algorithm: each algorithm turns the
// convolution (forward, backward data or backward filter) into GEMMs of its own shape, with its
// own count of multiplications and memory traffic, and a fitted efficiency relative to the GEMM
// model. Eligibility rules and transforms: docs/cost-model.md ("Convolutions").
#pragma once

#include "sim/cost/gemm_model.h"

namespace placesim {

struct ConvEstimate {
  double seconds = 0;
  ConvAlgorithm algorithm = ConvAlgorithm::kImplicitGemm;
  GemmEstimate gemm;  ///< the algorithm's (transformed) GEMM
};

/// Whether cuDNN offers `algorithm` for this pass of this convolution (filter size, stride,
/// dilation and groups; not whether the device's kernel model has fitted it).
bool conv_algorithm_eligible(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass);

/// The GEMM an algorithm runs for one pass, the tensors it reads and writes (input, filter and
/// output: an implicit GEMM never builds the im2col matrix) and what its transforms add.
struct ConvAsGemm {
  GemmShape gemm;
  double tensor_elements = 0;
  double extra_elements = 0;
};
ConvAsGemm conv_as_gemm(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass);

/// Time of one pass with one algorithm (the algorithm must be eligible and fitted).
ConvEstimate estimate_conv_with(ConvAlgorithm algorithm, const Conv2dShape& conv, KernelPass pass, double element_bytes,
                                Precision precision, const GemmDevice& device);

/// The fastest eligible algorithm that the device's kernel model has an efficiency for
/// (implicit GEMM is always available, at efficiency 1 when unfitted).
ConvEstimate estimate_conv(const Conv2dShape& conv, KernelPass pass, double element_bytes, Precision precision,
                           const GemmDevice& device);

}  // namespace placesim
