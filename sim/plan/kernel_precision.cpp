#include "sim/plan/kernel_precision.h"

namespace placesim {
namespace {

/// Kernels an fp8 run keeps in 16 bits: attention's (a fused attention kernel, or the batched
/// GEMMs of Q K^T and P V) and the model's output layer.
bool stays_16_bit(const KernelShape* kernel) {
  if (!kernel) return false;
  if (kernel->kind == KernelKind::kAttention) return true;
  return kernel->kind == KernelKind::kGemm && (kernel->gemm.samples_in_batch || kernel->gemm.output_layer);
}

}  // namespace

Precision kernel_precision(Precision run, OpKind kind, const KernelShape* kernel) {
  if (run != Precision::kFp8) return run;
  return linear_layer_gemm(kind, kernel) ? Precision::kFp8 : Precision::kBf16;
}

bool linear_layer_gemm(OpKind kind, const KernelShape* kernel) { return is_gemm_kind(kind) && !stays_16_bit(kernel); }

double kernel_bytes_scale(Precision run, OpKind kind, const KernelShape* kernel) {
  if (kernel_precision(run, kind, kernel) != Precision::kFp8) return 1.0;
  return gemm_operand_bytes(run) / element_bytes(run);
}

}  // namespace placesim
