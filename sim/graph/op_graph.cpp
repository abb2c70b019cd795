#include "sim/graph/op_graph.h"

#include <algorithm>
#include <queue>
#include <stdexcept>

namespace placesim {

OpId OpGraph::add_op(Op op) {
  if (index_.count(op.name)) throw std::invalid_argument("duplicate op name " + op.name);
  std::string name = op.name;
  OpId id = boost::add_vertex(std::move(op), graph_);
  index_.emplace(std::move(name), id);
  return id;
}

void OpGraph::add_edge(OpId from, OpId to) { add_edge(from, to, graph_[from].output_bytes); }

void OpGraph::add_edge(OpId from, OpId to, double bytes) { boost::add_edge(from, to, TensorEdge{bytes, false}, graph_); }

void OpGraph::add_control_edge(OpId from, OpId to) { boost::add_edge(from, to, TensorEdge{0, true}, graph_); }

OpId OpGraph::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? size() : it->second;
}

std::vector<OpGraph::Neighbor> OpGraph::inputs(OpId id) const {
  std::vector<Neighbor> result;
  for (auto [it, end] = boost::in_edges(id, graph_); it != end; ++it) {
    result.push_back({boost::source(*it, graph_), graph_[*it]});
  }
  return result;
}

std::vector<OpGraph::Neighbor> OpGraph::outputs(OpId id) const {
  std::vector<Neighbor> result;
  for (auto [it, end] = boost::out_edges(id, graph_); it != end; ++it) {
    result.push_back({boost::target(*it, graph_), graph_[*it]});
  }
  return result;
}

bool OpGraph::topological_order(std::vector<OpId>* order, std::vector<std::string>* cycle) const {
  const std::size_t n = size();
  std::vector<std::size_t> pending(n, 0);
  for (OpId v = 0; v < n; ++v) pending[v] = boost::in_degree(v, graph_);
  // Min-heap on id keeps the order stable: among ready ops, the earliest inserted goes first.
  std::priority_queue<OpId, std::vector<OpId>, std::greater<>> ready;
  for (OpId v = 0; v < n; ++v) {
    if (pending[v] == 0) ready.push(v);
  }
  order->clear();
  order->reserve(n);
  while (!ready.empty()) {
    OpId v = ready.top();
    ready.pop();
    order->push_back(v);
    for (auto [it, end] = boost::out_edges(v, graph_); it != end; ++it) {
      OpId w = boost::target(*it, graph_);
      if (--pending[w] == 0) ready.push(w);
    }
  }
  if (order->size() == n) return true;
  if (cycle) {
    // Walk backwards from a blocked op through blocked predecessors until a vertex repeats.
    cycle->clear();
    OpId start = n;
    for (OpId v = 0; v < n && start == n; ++v) {
      if (pending[v] > 0) start = v;
    }
    std::vector<OpId> path;
    std::vector<std::size_t> seen_at(n, n);
    OpId v = start;
    while (seen_at[v] == n) {
      seen_at[v] = path.size();
      path.push_back(v);
      OpId next = n;
      for (auto [it, end] = boost::in_edges(v, graph_); it != end; ++it) {
        OpId u = boost::source(*it, graph_);
        if (pending[u] > 0) {
          next = u;
          break;
        }
      }
      if (next == n) break;
      v = next;
    }
    if (seen_at[v] != n) {
      std::vector<OpId> loop(path.begin() + static_cast<std::ptrdiff_t>(seen_at[v]), path.end());
      std::reverse(loop.begin(), loop.end());
      for (OpId id : loop) cycle->push_back(graph_[id].name);
    }
  }
  return false;
}

GraphTotals OpGraph::totals() const {
  GraphTotals totals;
  for (OpId v = 0; v < size(); ++v) {
    const Op& o = graph_[v];
    totals.forward_flops += o.forward_flops;
    totals.backward_flops += o.backward_flops;
    totals.parameter_count += o.parameter_count;
    totals.activation_bytes += o.output_bytes;
  }
  totals.ops = size();
  return totals;
}

}  // namespace placesim
