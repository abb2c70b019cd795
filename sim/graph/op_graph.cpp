#include "sim/graph/op_graph.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <utility>

namespace placesim {

OpGraph::OpGraph(std::string name) : name_(std::move(name)), data_(std::make_shared<Data>()) {}

const std::shared_ptr<OpGraph::Data>& OpGraph::empty_data() {
  static const std::shared_ptr<Data> empty = std::make_shared<Data>();
  return empty;
}

OpGraph::OpGraph(OpGraph&& other) noexcept
    : name_(std::move(other.name_)), data_(std::exchange(other.data_, empty_data())) {}

OpGraph& OpGraph::operator=(OpGraph&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, empty_data());
  }
  return *this;
}

OpGraph::Data& OpGraph::mutable_data() {
  if (data_.use_count() > 1) data_ = std::make_shared<Data>(*data_);
  return *data_;
}

OpId OpGraph::add_op(Op op) {
  Data& data = mutable_data();
  if (data.index.count(op.name)) throw std::invalid_argument("duplicate op name " + op.name);
  std::string name = op.name;
  OpId id = boost::add_vertex(std::move(op), data.graph);
  data.index.emplace(std::move(name), id);
  return id;
}

void OpGraph::add_edge(OpId from, OpId to) { add_edge(from, to, data_->graph[from].output_bytes); }

void OpGraph::add_edge(OpId from, OpId to, double bytes) {
  boost::add_edge(from, to, TensorEdge{bytes, false}, mutable_data().graph);
}

void OpGraph::add_control_edge(OpId from, OpId to) { boost::add_edge(from, to, TensorEdge{0, true}, mutable_data().graph); }

OpId OpGraph::find(const std::string& name) const {
  auto it = data_->index.find(name);
  return it == data_->index.end() ? size() : it->second;
}

OpGraph::Neighbors OpGraph::inputs(OpId id) const {
  Neighbors result;
  result.reserve(boost::in_degree(id, data_->graph));
  for (auto [it, end] = boost::in_edges(id, data_->graph); it != end; ++it) {
    result.push_back({boost::source(*it, data_->graph), data_->graph[*it]});
  }
  return result;
}

OpGraph::Neighbors OpGraph::outputs(OpId id) const {
  Neighbors result;
  result.reserve(boost::out_degree(id, data_->graph));
  for (auto [it, end] = boost::out_edges(id, data_->graph); it != end; ++it) {
    result.push_back({boost::target(*it, data_->graph), data_->graph[*it]});
  }
  return result;
}

bool OpGraph::topological_order(std::vector<OpId>* order, std::vector<std::string>* cycle) const {
  const std::size_t n = size();
  std::vector<std::size_t> pending(n, 0);
  for (OpId v = 0; v < n; ++v) pending[v] = boost::in_degree(v, data_->graph);
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
    for (auto [it, end] = boost::out_edges(v, data_->graph); it != end; ++it) {
      OpId w = boost::target(*it, data_->graph);
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
      for (auto [it, end] = boost::in_edges(v, data_->graph); it != end; ++it) {
        OpId u = boost::source(*it, data_->graph);
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
      for (OpId id : loop) cycle->push_back(data_->graph[id].name);
    }
  }
  return false;
}

GraphTotals OpGraph::totals() const {
  GraphTotals totals;
  for (OpId v = 0; v < size(); ++v) {
    const Op& o = data_->graph[v];
    totals.forward_flops += o.forward_flops;
    totals.backward_flops += o.backward_flops;
    totals.parameter_count += o.parameter_count;
    totals.activation_bytes += o.output_bytes;
  }
  totals.ops = size();
  return totals;
}

}  // namespace placesim
