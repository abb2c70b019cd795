#include "sim/graph/op_graph.h"

#include <algorithm>
#include <iterator>
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

namespace {

/// Op `id`'s neighbours in a Layout's flat arrays.
OpGraph::Neighbors slice(const std::vector<OpGraph::Neighbor>& all, const std::vector<std::size_t>& begin, OpId id) {
  return OpGraph::Neighbors(all.begin() + static_cast<std::ptrdiff_t>(begin[id]),
                            all.begin() + static_cast<std::ptrdiff_t>(begin[id + 1]));
}

/// The neighbours at the far ends (`far_end(edge)`) of `edges`, with the edges' tensors.
template <typename Edges, typename FarEnd>
OpGraph::Neighbors collect(const OpGraph::Graph& graph, Edges edges, FarEnd far_end) {
  OpGraph::Neighbors result;
  result.reserve(static_cast<std::size_t>(std::distance(edges.first, edges.second)));
  for (auto it = edges.first; it != edges.second; ++it) result.push_back({far_end(*it), graph[*it]});
  return result;
}

/// Op v's producers and consumers as boost's edge lists hold them, in edge insertion order.
OpGraph::Neighbors collect_inputs(const OpGraph::Graph& graph, OpId v) {
  return collect(graph, boost::in_edges(v, graph), [&](const auto& edge) { return boost::source(edge, graph); });
}
OpGraph::Neighbors collect_outputs(const OpGraph::Graph& graph, OpId v) {
  return collect(graph, boost::out_edges(v, graph), [&](const auto& edge) { return boost::target(edge, graph); });
}

}  // namespace

OpGraph::LayoutCache::LayoutCache(const LayoutCache& other) {
  std::lock_guard<std::mutex> lock(other.mutex_);
  owner_ = other.owner_;
  raw_.store(owner_.get(), std::memory_order_release);
}

void OpGraph::LayoutCache::fill(const Graph& graph, const std::vector<OpId>& order) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (owner_) return;
  auto layout = std::make_shared<Layout>();
  layout->order = order;
  const std::size_t n = boost::num_vertices(graph);
  layout->input_begin.reserve(n + 1);
  layout->output_begin.reserve(n + 1);
  layout->inputs.reserve(boost::num_edges(graph));
  layout->outputs.reserve(boost::num_edges(graph));
  for (OpId v = 0; v < n; ++v) {
    layout->input_begin.push_back(layout->inputs.size());
    const Neighbors inputs = collect_inputs(graph, v);
    layout->inputs.insert(layout->inputs.end(), inputs.begin(), inputs.end());
    layout->output_begin.push_back(layout->outputs.size());
    const Neighbors outputs = collect_outputs(graph, v);
    layout->outputs.insert(layout->outputs.end(), outputs.begin(), outputs.end());
  }
  layout->input_begin.push_back(layout->inputs.size());
  layout->output_begin.push_back(layout->outputs.size());
  owner_ = std::move(layout);
  raw_.store(owner_.get(), std::memory_order_release);
}

void OpGraph::LayoutCache::clear() {
  if (!owner_) return;
  raw_.store(nullptr, std::memory_order_release);
  owner_.reset();
}

OpGraph::Data& OpGraph::mutable_data() {
  if (data_.use_count() > 1) data_ = std::make_shared<Data>(*data_);
  return *data_;
}

OpId OpGraph::add_op(Op op) {
  Data& data = mutable_data();
  if (data.index.count(op.name)) throw std::invalid_argument("duplicate op name " + op.name);
  std::string name = op.name;
  data.layout.clear();
  OpId id = boost::add_vertex(std::move(op), data.graph);
  data.index.emplace(std::move(name), id);
  return id;
}

void OpGraph::add_edge(OpId from, OpId to) { add_edge(from, to, data_->graph[from].output_bytes); }

void OpGraph::add_edge(OpId from, OpId to, double bytes) {
  Data& data = mutable_data();
  data.layout.clear();
  boost::add_edge(from, to, TensorEdge{bytes, false}, data.graph);
}

void OpGraph::add_control_edge(OpId from, OpId to) {
  Data& data = mutable_data();
  data.layout.clear();
  boost::add_edge(from, to, TensorEdge{0, true}, data.graph);
}

OpId OpGraph::find(const std::string& name) const {
  auto it = data_->index.find(name);
  return it == data_->index.end() ? size() : it->second;
}

OpGraph::Neighbors OpGraph::inputs(OpId id) const {
  const Graph& graph = data_->graph;
  if (const Layout* layout = data_->layout.get()) return slice(layout->inputs, layout->input_begin, id);
  return collect_inputs(graph, id);
}

OpGraph::Neighbors OpGraph::outputs(OpId id) const {
  const Graph& graph = data_->graph;
  if (const Layout* layout = data_->layout.get()) return slice(layout->outputs, layout->output_begin, id);
  return collect_outputs(graph, id);
}

bool OpGraph::topological_order(std::vector<OpId>* order, std::vector<std::string>* cycle) const {
  if (const Layout* known = data_->layout.get()) {
    order->assign(known->order.begin(), known->order.end());
    return true;
  }
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
  if (order->size() == n) {
    data_->layout.fill(data_->graph, *order);
    return true;
  }
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
