#include "sim/plan/kernel_precision.h"

namespace placesim {
namespace {

/// Attention's kernels: a fused attention kernel, or the batched GEMMs of Q K^T and P V.
bool is_attention_kernel(const KernelShape* kernel) {
  return kernel &&
         (kernel->kind == KernelKind::kAttention || (kernel->kind == KernelKind::kGemm && kernel->gemm.samples_in_batch));
}

}  // namespace

Precision kernel_precision(Precision run, OpKind kind, const KernelShape* kernel) {
  if (run != Precision::kFp8) return run;
  return is_gemm_kind(kind) && !is_attention_kernel(kernel) ? Precision::kFp8 : Precision::kBf16;
}

double kernel_bytes_scale(Precision run, OpKind kind, const KernelShape* kernel) {
  if (kernel_precision(run, kind, kernel) != Precision::kFp8) return 1.0;
  return gemm_operand_bytes(run) / element_bytes(run);
}

}  // namespace placesim
