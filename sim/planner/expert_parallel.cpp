#include "sim/planner/expert_parallel.h"

#include <algorithm>
#include <map>

namespace placesim {

ExpertBranches find_expert_branches(const OpGraph& graph) {
  ExpertBranches found;
  found.layer_of.assign(graph.size(), -1);
  found.expert_of.assign(graph.size(), -1);
  found.dispatch_layer.assign(graph.size(), -1);
  found.combine_layer.assign(graph.size(), -1);
  std::vector<OpId> order;
  graph.topological_order(&order, nullptr);
  // branch[v]: the dispatch whose branch v is on (the dispatch itself included); kNone or
  // kMixed otherwise.
  constexpr OpId kNone = static_cast<OpId>(-1), kMixed = static_cast<OpId>(-2);
  std::vector<OpId> branch(graph.size(), kNone);
  for (OpId v : order) {
    const Op& op = graph.op(v);
    if (op.type == "MoeDispatch") {
      branch[v] = v;
      continue;
    }
    if (op.type == "MoeCombine") {
      MoeLayer layer{v, {}};
      for (const auto& input : graph.inputs(v)) {
        if (!input.edge.control && branch[input.op] != kNone && branch[input.op] != kMixed) {
          layer.dispatches.push_back(branch[input.op]);
        }
      }
      std::sort(layer.dispatches.begin(), layer.dispatches.end());
      layer.dispatches.erase(std::unique(layer.dispatches.begin(), layer.dispatches.end()), layer.dispatches.end());
      if (!layer.dispatches.empty()) found.layers.push_back(std::move(layer));
      continue;
    }
    for (const auto& input : graph.inputs(v)) {
      if (input.edge.control || branch[input.op] == kNone) continue;
      branch[v] = branch[v] == kNone || branch[v] == branch[input.op] ? branch[input.op] : kMixed;
    }
  }
  std::map<OpId, std::pair<int64_t, int64_t>> expert_of_dispatch;  // dispatch -> (layer, expert)
  for (size_t l = 0; l < found.layers.size(); ++l) {
    const auto& dispatches = found.layers[l].dispatches;
    found.combine_layer[found.layers[l].combine] = static_cast<int64_t>(l);
    for (OpId dispatch : dispatches) found.dispatch_layer[dispatch] = static_cast<int64_t>(l);
    for (size_t j = 0; j < dispatches.size(); ++j) {
      expert_of_dispatch[dispatches[j]] = {static_cast<int64_t>(l), static_cast<int64_t>(j)};
    }
  }
  for (OpId v = 0; v < graph.size(); ++v) {
    if (branch[v] == kNone || branch[v] == kMixed || branch[v] == v) continue;
    auto it = expert_of_dispatch.find(branch[v]);
    if (it == expert_of_dispatch.end()) continue;
    found.layer_of[v] = it->second.first;
    found.expert_of[v] = it->second.second;
  }
  return found;
}

Op expert_parallel_shard(const Op& op, int64_t ranks) {
  if (ranks == 1) return op;
  const double n = static_cast<double>(ranks);
  Op shard = op;
  shard.forward_flops *= n;
  shard.backward_flops *= n;
  shard.output_bytes *= n;
  // Forward reads the weights once (the rest are tokens: n x); backward reads them and writes
  // their gradients once (layer_costs.h: backward moves twice forward's bytes).
  const double weights = op.parameter_bytes();
  shard.forward_bytes = weights + (op.forward_bytes - weights) * n;
  shard.backward_bytes = 2 * weights + (op.backward_bytes - 2 * weights) * n;
  shard.forward_bytes = std::max(shard.forward_bytes, op.forward_bytes);
  shard.backward_bytes = std::max(shard.backward_bytes, op.backward_bytes);
  shard.batch_statistics_bytes *= n;  // of the tokens: n x
  shard.gradient_sum_bytes *= n;
  if (op.kernel && op.kernel->kind == KernelKind::kGemm) {
    KernelShape kernel = *op.kernel;
    (kernel.gemm.samples_in_batch ? kernel.gemm.batch : kernel.gemm.m) *= ranks;
    shard.kernel = std::make_shared<const KernelShape>(kernel);
  }
  return shard;
}

double expert_exchange_bytes(const OpGraph& graph, const MoeLayer& layer, int64_t tensor, int64_t context) {
  double bytes = 0;
  for (OpId dispatch : layer.dispatches) bytes += graph.op(dispatch).output_bytes;
  return bytes / static_cast<double>(tensor * context);
}

}  // namespace placesim
