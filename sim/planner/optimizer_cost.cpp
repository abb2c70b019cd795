#include "sim/planner/optimizer_cost.h"

namespace placesim {

OptimizerCost optimizer_cost(Optimizer optimizer, double dtype_bytes) {
  // In mixed precision (elements under 4 bytes) the update works on fp32 master weights and
  // moments (Micikevicius et al. 2018): it reads the low-precision gradient, reads and writes the
  // fp32 master and moments, and writes the model's low-precision copy of the weights; PyTorch AMP,
  // whose parameters and gradients stay fp32, moves the same bytes for SGD, momentum and Adam.
  const bool mixed = dtype_bytes < 4;
  const double master_bytes = 4;
  switch (optimizer) {
    case Optimizer::kSgd:  // w -= lr*g: read w, g; write w
      return {2, mixed ? 2 * master_bytes + 2 * dtype_bytes : 3 * dtype_bytes, 0};
    case Optimizer::kMomentum:  // v = m*v + g; w -= lr*v: read w, g, v; write w, v
      return {4, mixed ? 4 * master_bytes + 2 * dtype_bytes : 5 * dtype_bytes, 1};
    case Optimizer::kAdam:  // m, v moments, bias correction, sqrt, divide: read w, g, m, v; write w, m, v
      return {12, mixed ? 6 * master_bytes + 2 * dtype_bytes : 7 * dtype_bytes, 2};
    case Optimizer::kLamb:
      // LAMB (You et al. 2020, algorithm 2) as NVIDIA's fused kernels run it (DeepLearningExamples
      // BERT, lamb_amp_opt/csrc/multi_tensor_lamb.cu, 21.11): a global gradient norm, then per
      // tensor the weights' norm, stage 1 (read g, w, m, v; write m, v and the update u), the
      // update's norm and stage 2 (read u, w; write w): 13 passes of a parameter-sized buffer in
      // fp32. In fp16 the weights, m and v are fp32 copies (master weights) and g, u are fp16, with
      // GradScaler's inf check (read and write g) first and the fp16 weights written last:
      // 8 fp16 passes + 8 fp32 ones = 48 bytes per parameter. FLOPs: Adam's 12 + 3 norms (2 each)
      // + the trust-ratio scaling (2).
      if (dtype_bytes >= 4) return {20, 13 * dtype_bytes, 2};
      return {20, 8 * dtype_bytes + 8 * 4, 2};
  }
  return {2, 3 * dtype_bytes, 0};
}

double megatron_optimizer_step_bytes(double base_fp32_bytes, Precision precision) {
  // Megatron-LM @de59329835 (2022-05-24), megatron/optimizer/optimizer.py,
  // MixedPrecisionOptimizer.step and Float16OptimizerWithFloat16Params, and megatron/training.py,
  // train_step. The fp32 main weights and the optimizer state are updated by the base optimizer
  // (apex's fused multi-tensor kernels) in separate passes over parameter-sized buffers:
  //   _copy_model_grads_to_main_grads: main_grad.float(); a copy (read 2, write 4 bytes) where the
  //     gradient buffer is 16-bit (fp16's default; arguments.py forces
  //     --accumulate-allreduce-grads-in-fp32 for bf16, and then .float() returns the buffer itself);
  //   _unscale_main_grads_and_check_for_nan, fp16 only (bf16 runs without a grad scaler):
  //     torch._amp_foreach_non_finite_check_and_unscale_ reads and writes the fp32 gradients (8);
  //   clip_grad_norm_fp32: amp_C.multi_tensor_l2norm reads them (4); its rescale runs only when
  //     the norm exceeds the clip value and is not charged;
  //   self.optimizer.step(): the base update on fp32 weights, gradients and state;
  //   _copy_main_params_to_model_params: multi_tensor_scale from fp32 to 16-bit (read 4, write 2);
  //   train_step's zero_grad_buffer before the next step's backward: a write of the gradient
  //     buffer (2 bytes in fp16, 4 in bf16).
  // FP32Optimizer (32-bit training): the norm, the update and the buffer's zeroing.
  switch (precision) {
    case Precision::kFp16:
      return 6 + 8 + 4 + base_fp32_bytes + 6 + 2;
    case Precision::kBf16:
    case Precision::kFp8:
      return 4 + base_fp32_bytes + 6 + 4;
    default:
      return 4 + base_fp32_bytes + 4;
  }
}

OptimizerStep optimizer_step(const RunOptions& run, Framework framework) { return {run.optimizer, framework, run.precision}; }

OptimizerCost optimizer_step_cost(const OptimizerStep& step, double dtype_bytes) {
  OptimizerCost cost = optimizer_cost(step.optimizer, dtype_bytes);
  if (step.framework != Framework::kMegatron) return cost;
  const OptimizerCost fp32 = optimizer_cost(step.optimizer, 4);
  cost.bytes_per_parameter = megatron_optimizer_step_bytes(fp32.bytes_per_parameter, step.precision);
  // Unscaling (one multiply) and the norm (a multiply-add) per parameter.
  cost.flops_per_parameter = fp32.flops_per_parameter + 2 + (step.precision == Precision::kFp16 ? 1 : 0);
  return cost;
}

}  // namespace placesim
