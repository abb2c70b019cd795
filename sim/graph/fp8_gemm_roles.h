// Which GEMMs of a graph Transformer Engine runs in which way under fp8 (sim/cost/fp8_casts.h,
// sim/plan/kernel_precision.h): a linear layer fed by a layer norm (TE's LayerNormLinear, whose
// norm writes the FP8 input itself) and the model's output layer (Megatron-Core's own, in bf16).
// The zoo marks them as it builds a model; an ONNX import has them inferred from its graph.
#pragma once

#include "sim/graph/op_graph.h"

namespace placesim {

/// Marks the GEMM producing `logits` (the op itself, or through at most one elementwise op such
/// as a bias add) as the output layer (GemmShape::output_layer). Nothing when there is none.
void mark_output_layer(OpGraph& graph, OpId logits);

/// For a graph that does not say (an ONNX import): every GEMM whose first data input a layer norm
/// writes (LayerNormalization, SkipLayerNormalization, SimplifiedLayerNormalization,
/// RMSNormalization, or placesim's LayerNorm and RMSNorm) reads its input from normalization; the GEMM behind each of the graph's
/// ends (an op nothing reads, or the op a softmax or loss that nothing reads reads) is the
/// output layer.
void infer_fp8_gemm_roles(OpGraph& graph);

}  // namespace placesim
