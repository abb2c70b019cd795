// Context parallelism (Grattafiori et al. 2024, "The Llama 3 Herd of Models", section 3.3.2):
// each sequence is split into 2 c chunks and rank k of a context group of c devices takes chunks
// k and 2c - 1 - k, which balances the causal attention's work. Every op then runs on 1/c of the
// tokens; before each attention the group all-gathers K and V (the Llama 3 method: K and V are
// small beside Q under grouped-query attention, so the gather is not overlapped), and after its
// backward it reduce-scatters their gradients. The weights are whole on every rank and their
// gradients are reduced with the data-parallel replicas'. Formulas: docs/llm-planning.md.
#pragma once

#include <cstdint>

#include "sim/graph/op_graph.h"

namespace placesim {

/// Op `op` (already split by its tensor-parallel role) as one of `ranks` context ranks runs it:
/// FLOPs, bytes moved and output divided by `ranks`, parameters whole; a GEMM's rows (its tokens,
/// an attention's queries) divided too. The attention's keys stay whole: each rank's queries
/// meet the whole gathered sequence, so its work is also 1/`ranks` of the op's.
Op context_parallel_shard(const Op& op, int64_t ranks);

/// Bytes of the keys and values that attention-scores op `v` and the context op after it read,
/// for the whole sequence of the op's samples, before any split: what a context group gathers
/// (and, for the gradients, reduce-scatters) around that attention. 0 for any other op. The
/// keys are what the op reads beyond its queries (the edges into it less the queries, batch x
/// queries x head width of its kernel); the values are as many bytes again.
double attention_key_value_bytes(const OpGraph& graph, OpId v);

}  // namespace placesim
