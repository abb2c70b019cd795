// Model FLOPs of one training (or inference) sample, as MFU counts them: for a language model the
// PaLM formula (Chowdhery et al. 2022, "PaLM: Scaling Language Modeling with Pathways",
// appendix B) with its attention term, for any other graph the FLOPs its ops declare; and the
// hardware FLOPs (HFU) that also count recomputed forwards. docs/llm-planning.md.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/graph/op_graph.h"

namespace placesim {

/// What the PaLM formula needs of a decoder: found in the graph's attention score ops, each a
/// batched GEMM whose output is [batch, heads, T, T] (the zoo's `gpt`, `LayerBuilder::attention_scores`).
struct TransformerShape {
  int64_t layers = 0;    ///< L: attention score ops
  int64_t heads = 0;     ///< H
  int64_t head_dim = 0;  ///< Q = hidden / heads
  int64_t sequence = 0;  ///< T: tokens per sample
};

/// Which forwards run again in backward: none, the whole forward (`run.recompute`), or the core
/// attention only (`selective_recompute`, Korthikanti et al. 2022, section 5).
enum class Recomputation { kNone, kFull, kSelective };

struct ModelFlops {
  double parameters = 0;  ///< every trainable parameter of the graph (embeddings included)
  /// N of the formula: the parameters a token meets, each mixture-of-experts expert's weighted by
  /// its share of the tokens (top_k of E experts: k / E each); every parameter for a dense model.
  double active_parameters = 0;
  std::optional<TransformerShape> transformer;  ///< set: a language model, counted per token
  double tokens_per_sample = 0;                 ///< T for a language model, 0 otherwise
  /// Training, per token: 6N + 12 L H Q T (PaLM; 2N + 4 L H Q T per token for inference). Any
  /// other graph: its ops' forward (+ backward) FLOPs per sample.
  double model_flops_per_sample = 0;
  /// Model FLOPs plus the recomputed forwards: full adds 2N + 4 L H Q T per token (one more
  /// forward), selective 4 L H Q T (the attention's two batched GEMMs). Other graphs: + forward.
  double hardware_flops_per_sample = 0;
};

/// The parameters a token meets (ModelFlops::active_parameters) in a graph built for `batch_size`
/// samples of `sequence` tokens: an op between a "MoeDispatch" and its "MoeCombine" counts
/// the share of the tokens its GEMM takes (its rows / (batch x sequence)), every other op whole.
double active_parameters(const OpGraph& graph, int64_t batch_size, int64_t sequence);

/// The transformer shape of a graph with attention score ops (all of one shape), else nullopt.
std::optional<TransformerShape> transformer_shape(const OpGraph& graph);

/// Model and hardware FLOPs per sample of `graph`, built for `batch_size` samples.
ModelFlops model_flops(const OpGraph& graph, int64_t batch_size, bool training, Recomputation recomputation);

}  // namespace placesim
