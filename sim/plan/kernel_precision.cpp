#include "sim/plan/kernel_precision.h"

namespace placesim {

Precision kernel_precision(Precision run, OpKind kind) {
  if (run != Precision::kFp8) return run;
  return is_gemm_kind(kind) ? Precision::kFp8 : Precision::kBf16;
}

double kernel_bytes_scale(Precision run, OpKind kind) {
  if (run != Precision::kFp8 || !is_gemm_kind(kind)) return 1.0;
  return gemm_operand_bytes(run) / element_bytes(run);
}

}  // namespace placesim
