// Memory model: what a device holds for the whole run on behalf of each op it runs — the
// parameters, their gradients and the optimizer state — by precision and optimizer. Buffers that
// come and go (activations, received tensors, workspace) are measured from the timeline by
// sim/timeline/buffer_memory.h. Formulas and sources: docs/cost-model.md, "Memory".
#pragma once

#include "sim/graph/op.h"
#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"

namespace placesim {

/// True when training keeps fp32 master weights beside fp16/bf16 working weights
/// (mixed-precision training, Micikevicius et al. 2018); fp8 training too, whose working weights
/// are bf16 (NVIDIA Transformer Engine user guide, "Using FP8 with Transformer Engine").
bool mixed_precision(Precision precision);

/// Bytes per parameter that fp8 training keeps beside a GEMM's (matmul or convolution's) bf16
/// weights: its FP8 copy and the FP8 copy of its transpose, 1 + 1 = 2. Transformer Engine casts a
/// Linear layer's weight to FP8 once per step and caches it across micro-batches (the
/// `is_first_microbatch` argument of te.Linear.forward, "FP8 weight caching" in its
/// advanced-optimizations guide); Hopper's FP8 tensor cores take only the TN layout, so the
/// backward data GEMM needs the transposed copy (TE's cast_transpose). 0 for ops that do not
/// compute in FP8 (kernel_precision.h: attention, the output layer) and other precisions. With mixed-precision Adam an fp8 GEMM parameter holds 2 + 2 (fp8 copies)
/// + 2 + 12 = 18 bytes; its other parameters (embeddings, norms) 16 (docs/llm-planning.md, "FP8").
double fp8_weight_cache_bytes_per_parameter(const Op& op, Precision precision);

/// Bytes of optimizer state per parameter element: fp32 moments (1 for momentum, 2 for Adam),
/// plus a 4-byte fp32 master copy of the weights under mixed precision. Mixed-precision Adam:
/// 4 + 2 x 4 = 12, so with 2-byte weights and 2-byte gradients 16 bytes per parameter in all
/// (ZeRO, Rajbhandari et al. 2020, section 3.1).
double optimizer_state_bytes_per_parameter(Optimizer optimizer, Precision precision, double dtype_bytes);

/// Bytes of one gradient element: 4 under mixed precision with run.fp32_gradients (the gradients
/// accumulated and reduced in fp32, as Megatron-LM does for bf16), else `dtype_bytes`, the
/// parameters' own.
double gradient_element_bytes(const RunOptions& run, double dtype_bytes);

/// `op`'s gradients in bytes: its parameter count x gradient_element_bytes. What it holds in
/// training and what each data-parallel reduction of them moves.
double gradient_bytes(const Op& op, const RunOptions& run);

/// The static memory op `op` adds to the device it runs on: parameters (with fp8's weight
/// caches) always; gradients (gradient_bytes) and optimizer state when training.
StaticMemory op_static_memory(const Op& op, const RunOptions& run);

void add_static_memory(StaticMemory* into, const StaticMemory& more);

/// With recomputation, whether the tensor on the edge from `from` into `to` is a checkpoint: it
/// crosses from one layer into another (both ops have a `layer` and they differ), so the layer
/// is recomputed from it and it is kept until the consumer's backward. Megatron keeps each
/// transformer layer's input (Korthikanti et al. 2022, section 4.2.2). Ops without a layer hold
/// no checkpoint: every buffer of theirs goes once its consumers' forwards end.
bool crosses_layers(const OpGraph& graph, OpId from, OpId to);

}  // namespace placesim
