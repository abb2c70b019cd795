// Expert parallelism (Lepikhin et al. 2021, GShard, section 2.2; Fedus et al. 2022, Switch
// Transformer, section 2.2; Megatron-Core's MoE layer): the experts of each mixture-of-experts
// layer are spread over an expert group of `ranks` data-parallel replicas, E / ranks experts
// each. Every replica routes its own tokens; an all-to-all sends each routed token to its
// expert's rank, each rank runs its experts on the tokens the whole group routed to them (ranks x
// the rows one replica routes), and a second all-to-all brings the outputs home; backward runs the
// two in reverse. The dense weights stay whole on every replica; an expert's gradients are reduced
// over the replicas that hold it. Formulas: docs/llm-planning.md#expert-parallelism.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/graph/op_graph.h"

namespace placesim {

/// One mixture-of-experts layer of a graph: its "MoeCombine" and, one per expert in expert
/// order, the "MoeDispatch" ops whose branches it sums.
struct MoeLayer {
  OpId combine = 0;
  std::vector<OpId> dispatches;
};

/// The four all-to-alls of a MoE layer under expert parallelism, in the order a step runs them.
enum class ExpertExchange { kDispatch, kCombine, kCombineGradient, kDispatchGradient };

/// An edge of the graph that an expert group's all-to-all carries: a dispatch's tokens into its
/// expert (the dispatch side) or an expert's output into the combine (the combine side).
struct ExpertCrossing {
  int64_t layer = 0;
  bool dispatch_side = true;
  /// The all-to-all carrying the edge's tensor (forward) or its gradient (backward).
  ExpertExchange exchange(bool forward) const {
    if (forward) return dispatch_side ? ExpertExchange::kDispatch : ExpertExchange::kCombine;
    return dispatch_side ? ExpertExchange::kDispatchGradient : ExpertExchange::kCombineGradient;
  }
};

/// The experts of a graph: each MoE layer, and for every op of an expert's branch (after its
/// dispatch, before the combine) the layer and the expert it belongs to.
struct ExpertBranches {
  std::vector<MoeLayer> layers;
  std::vector<int64_t> layer_of;   ///< by OpId: index into `layers`, -1 outside every branch
  std::vector<int64_t> expert_of;  ///< by OpId: the expert's index in its layer, -1 outside
  std::vector<int64_t> dispatch_layer;  ///< by OpId: for a layer's dispatch, the layer; else -1
  std::vector<int64_t> combine_layer;   ///< by OpId: for a layer's combine, the layer; else -1

  /// The all-to-all side the data edge `from` -> `to` crosses, if any.
  std::optional<ExpertCrossing> crossing(OpId from, OpId to) const {
    if (layer_of[to] >= 0 && dispatch_layer[from] == layer_of[to]) return ExpertCrossing{layer_of[to], true};
    if (combine_layer[to] >= 0 && layer_of[from] == combine_layer[to]) return ExpertCrossing{combine_layer[to], false};
    return std::nullopt;
  }
};

/// Finds the MoE layers: an op belongs to a branch when one of its inputs is a dispatch or an op
/// of that branch; a combine closes the branches that feed it. Ops of two branches, or branches
/// that never reach a combine, belong to none.
ExpertBranches find_expert_branches(const OpGraph& graph);

/// Op `op` (already split by tensor and context rank) as one rank of an expert group of `ranks`
/// runs it: the tokens of the whole group, so FLOPs, output and the activation bytes it moves x
/// `ranks`, its weights read (and their gradients written) once; a GEMM's rows x `ranks`.
Op expert_parallel_shard(const Op& op, int64_t ranks);

/// Bytes one rank of an expert group sends and receives in one of the layer's all-to-alls (whole
/// batch, before any split): the rows its dispatches route, (tensor x context)ths of them per
/// tensor and context rank (Megatron-Core dispatches the sequence-parallel share of the tokens).
double expert_exchange_bytes(const OpGraph& graph, const MoeLayer& layer, int64_t tensor, int64_t context);

}  // namespace placesim
