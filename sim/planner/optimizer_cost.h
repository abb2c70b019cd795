// What one optimizer step costs per parameter: the update itself (SGD, momentum, Adam, LAMB) and
// the passes its framework runs around it (Megatron-LM's mixed-precision wrapper).
#pragma once

#include "sim/core/precision.h"
#include "sim/spec/framework.h"
#include "sim/spec/run_options.h"

namespace placesim {

/// Optimizer cost per parameter element: FLOPs and bytes of state read+written (see
/// docs/cost-model.md), and extra persistent state in parameter-sized copies.
struct OptimizerCost {
  double flops_per_parameter;
  double bytes_per_parameter;
  double state_copies;
};
/// The update alone, as a fused kernel runs it (fp32 master weights in mixed precision).
OptimizerCost optimizer_cost(Optimizer optimizer, double dtype_bytes);

/// How an optimizer step runs: the update and the framework whose wrapper runs around it.
struct OptimizerStep {
  Optimizer optimizer = Optimizer::kSgd;
  Framework framework = Framework::kLinksOnly;
  Precision precision = Precision::kFp32;
};
/// The run's optimizer step under `framework` (the strategy's: its wrapper's passes).
OptimizerStep optimizer_step(const RunOptions& run, Framework framework = Framework::kLinksOnly);

/// The step's cost per parameter: `optimizer_cost`, except under Megatron-LM, whose wrapper
/// makes separate passes in every precision (megatron_optimizer_step_bytes).
OptimizerCost optimizer_step_cost(const OptimizerStep& step, double dtype_bytes);

/// Bytes per parameter that Megatron-LM's optimizer moves in one step (MixedPrecisionOptimizer.step
/// or FP32Optimizer.step, megatron/optimizer/optimizer.py, and train_step): the base optimizer's
/// fp32 update plus, in 16 bits, the copy of fp16 gradients to fp32, unscaling and the copy of the
/// fp32 weights back to the model's 16-bit ones, and in every precision the gradient norm and the
/// zeroing of the gradient buffer. `base_fp32_bytes`: the update's bytes per parameter on fp32
/// weights, gradients and state.
double megatron_optimizer_step_bytes(double base_fp32_bytes, Precision precision);

}  // namespace placesim
