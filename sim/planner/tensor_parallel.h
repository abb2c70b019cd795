// Tensor (intra-layer) parallelism in the Megatron style (Shoeybi et al. 2019, "Megatron-LM"):
// which ops of a graph a group of t devices splits, what one rank of the group computes and
// holds, and the activations its backward keeps (Korthikanti et al. 2022). A column-parallel
// GEMM splits its output (each rank holds 1/t of the weight columns); a row-parallel GEMM splits
// its input and produces a partial sum that the group all-reduces; the ops between them work on
// 1/t of the data. Formulas and sources: docs/tensor-parallel.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/graph/op_graph.h"

namespace placesim {

enum class TensorRole {
  kReplicated,  ///< every rank runs the whole op (layer norms, residual adds, position embedding)
  kColumn,      ///< output split over the ranks; the input's gradient is all-reduced in backward
  kSplit,       ///< between a column and a row op: 1/t of the work and of the output
  kRow,         ///< input split; the output is a partial sum, all-reduced in forward
  /// With sequence parallelism (Korthikanti et al. 2022, section 4.2.2), an op that would be
  /// replicated runs on 1/t of the sequence: 1/t of the work, the output and the activations it
  /// keeps; its parameters stay whole on every rank.
  kSequence,
};

/// Op-name globs of the Megatron split of the zoo's transformers: QKV and MLP up-projection by
/// columns, attention and MLP output projections by rows; the vocabulary-parallel embedding is a
/// row op (each rank looks up its 1/t of the vocabulary, the partial embeddings are all-reduced) and
/// the tied logits a column op (each rank computes 1/t of the vocabulary, Megatron's parallel
/// cross-entropy). Encoder-decoders add the cross-attention's Q, K and V projections (columns),
/// its output projection (rows) and the decoder's lookup in the shared embedding (rows).
std::vector<std::string> default_column_parallel_ops();
std::vector<std::string> default_row_parallel_ops();
/// Op-name globs of the zoo transformers' core attention (Q K^T, T5's position bias, softmax, its
/// dropout, the product with V; self- and cross-attention), which selective recomputation re-runs
/// in backward (Korthikanti et al. 2022, section 5).
std::vector<std::string> default_selective_recompute_ops();
/// The zoo's tied weights (reader, owner): the logits read the token embedding, and so does an
/// encoder-decoder's target-side lookup.
std::vector<std::pair<std::string, std::string>> default_tied_weights();

/// The role of every op (by OpId): ops matching `column` or `row` globs take those roles; ops
/// reachable from a column op's output without passing a row op are kSplit; the rest replicated.
std::vector<TensorRole> tensor_parallel_roles(const OpGraph& graph, const std::vector<std::string>& column,
                                              const std::vector<std::string>& row);

/// Sequence parallelism: every kReplicated role becomes kSequence. The tensor all-reduces stay as
/// they are: Megatron replaces each by a reduce-scatter and an all-gather, which move the same
/// bytes in the same ring time.
void use_sequence_parallelism(std::vector<TensorRole>* roles);

/// Op `op` as one of `ranks` devices runs it: FLOPs and bytes moved divided by `ranks` for every
/// role but kReplicated, parameters too but for kSequence; the output divided too except a row
/// op's (a full-size partial sum).
Op tensor_parallel_shard(const Op& op, TensorRole role, int64_t ranks);

/// Bytes one rank receives on the edge from `producer` (per rank of its output).
double tensor_parallel_edge_bytes(double edge_bytes, TensorRole producer, int64_t ranks);

/// Bytes of forward activations that op `v`'s backward reads, on one rank (Korthikanti et al.
/// 2022, section 4.1): a GEMM keeps its inputs (both for the attention batched GEMMs), layer norm
/// and GELU their input, softmax its output, dropout a 1-byte mask per element; adds, reshapes
/// and inputs keep nothing. With the GPT generator's dropouts in fp16 this sums, per transformer
/// layer, to s b h (34 + 5 a s / h) on one device, s b h (10 + 24/t + 5 a s / (h t)) on each of
/// t tensor-parallel ranks, and s b h (34 + 5 a s / h) / t with sequence parallelism.
/// `recomputed` (selective recomputation, by OpId; null = none): a recomputed op keeps only the
/// inputs that come from ops that are not recomputed, and a recomputed softmax or dropout keeps
/// nothing. For the core attention of a GPT layer that removes the 5 a s / h term: s b h (10 + 24/t)
/// per layer, s b h 34 / t with sequence parallelism (Korthikanti et al. 2022, table 2).
double saved_activation_bytes(const OpGraph& graph, const std::vector<TensorRole>& roles, int64_t ranks, OpId v,
                              const std::vector<bool>* recomputed = nullptr);

}  // namespace placesim
