// Which format a task's kernel computes in under the run's precision: under fp8 (Transformer
// Engine style) only the GEMMs of linear layers run in FP8, every other kernel (attention's
// included) in bf16; other precisions run as given.
#pragma once

#include "sim/core/precision.h"
#include "sim/graph/kernel_shape.h"
#include "sim/graph/op.h"

namespace placesim {

/// The precision whose peak prices a kernel of `kind` (with kernel shape `kernel`, null when it
/// has none): fp8 for a linear layer's GEMM of an fp8 run, bf16 for its elementwise,
/// normalization, softmax, reduction and embedding kernels and for attention, fused
/// (KernelKind::kAttention) or as batched GEMMs whose samples scale the batch (NVIDIA
/// Transformer Engine user guide, "Using FP8 with Transformer Engine": only the GEMMs of Linear
/// layers run in FP8; TE v1.8's DotProductAttention computes in bf16 unless its FP8 attention is
/// switched on, fp8_dpa, off by default) and for the model's output layer (GemmShape::output_layer:
/// Megatron-Core's is its own ColumnParallelLinear, outside TE's FP8 autocast); `run` itself for
/// every other precision.
Precision kernel_precision(Precision run, OpKind kind, const KernelShape* kernel = nullptr);

/// Whether a kernel of `kind` (shape `kernel`, null when it has none) is a linear layer's GEMM,
/// the kernels Transformer Engine runs (in FP8 under fp8, and with its userbuffers' overlap of
/// tensor-parallel collectives): a GEMM or convolution kind, but not attention's (fused or
/// batched) nor the output layer's.
bool linear_layer_gemm(OpKind kind, const KernelShape* kernel);

/// What a task's memory traffic (counted at the run's element_bytes) is multiplied by for its
/// kernel: gemm_operand_bytes / element_bytes = 1/2 for an fp8 GEMM (1-byte operands read where
/// the graph counted 2), 1 otherwise.
double kernel_bytes_scale(Precision run, OpKind kind, const KernelShape* kernel = nullptr);

}  // namespace placesim
