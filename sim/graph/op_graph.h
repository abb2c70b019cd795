// OpGraph: a model as a directed acyclic graph of Ops joined by TensorEdges, stored in a
// Boost.Graph adjacency list. Ops keep their insertion order (the order logs print them in).
// Copies share the ops and edges until one of them changes (copy on write): a sweep copies one
// cached graph into every configuration's scenario. Not thread-safe for writes; concurrent reads
// are fine.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <boost/graph/adjacency_list.hpp>

#include "sim/graph/op.h"

namespace placesim {

using OpId = std::size_t;

/// Totals over a graph, for summaries and tests against published figures.
struct GraphTotals {
  double forward_flops = 0;
  double backward_flops = 0;
  double parameter_count = 0;
  double activation_bytes = 0;  ///< sum of op outputs
  std::size_t ops = 0;
};

class OpGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op, TensorEdge>;

  explicit OpGraph(std::string name = "model");
  OpGraph(const OpGraph&) = default;             ///< shares the ops and edges (copy on write)
  OpGraph& operator=(const OpGraph&) = default;
  OpGraph(OpGraph&& other) noexcept;             ///< leaves `other` an empty graph
  OpGraph& operator=(OpGraph&& other) noexcept;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// Adds an op; throws std::invalid_argument if the name is taken (loaders check first).
  OpId add_op(Op op);
  /// Adds a data edge carrying the producer's output bytes (or `bytes` when given).
  void add_edge(OpId from, OpId to);
  void add_edge(OpId from, OpId to, double bytes);
  /// Adds a control dependency (no data).
  void add_control_edge(OpId from, OpId to);

  std::size_t size() const { return boost::num_vertices(data_->graph); }
  const Op& op(OpId id) const { return data_->graph[id]; }
  /// Op `id` to change: this graph stops sharing its ops with its copies first. The reference
  /// is this graph's until it is next copied (a copy made while it is held would share the change).
  Op& mutable_op(OpId id) { return mutable_data().graph[id]; }
  /// The op named `name`, or size() when absent.
  OpId find(const std::string& name) const;
  bool contains(const std::string& name) const { return data_->index.count(name) > 0; }

  struct Neighbor {
    OpId op;
    TensorEdge edge;
  };
  /// An op's producers or consumers: most have a few, held without an allocation (the planners
  /// ask for them once per op of every plan a sweep builds).
  using Neighbors = boost::container::small_vector<Neighbor, 4>;
  /// Producers feeding `id`, in edge insertion order.
  Neighbors inputs(OpId id) const;
  /// Consumers of `id`, in edge insertion order.
  Neighbors outputs(OpId id) const;

  /// Ops in a topological order, stable with respect to insertion order (Kahn's algorithm).
  /// Returns false and fills `cycle` with the op names on one cycle when the graph has one. An
  /// acyclic graph's order is computed once and kept (with the copies sharing it) until an op or
  /// an edge is added: a sweep's planners ask the same shared graph for it several times per plan.
  bool topological_order(std::vector<OpId>* order, std::vector<std::string>* cycle) const;

  GraphTotals totals() const;
  const Graph& graph() const { return data_->graph; }

 private:
  /// What a finished graph's readers ask for again and again, computed from its ops and edges
  /// by the first topological_order() and kept until an op or edge is added: the order, and each
  /// op's producers and consumers in flat arrays (boost's in-edge lists reach each edge's bytes
  /// through a pointer; the slot emitters read them once per op of every micro-batch slot).
  struct Layout {
    std::vector<OpId> order;
    std::vector<std::size_t> input_begin, output_begin;  ///< op v's are [begin[v], begin[v + 1])
    std::vector<Neighbor> inputs, outputs;
  };
  /// A Layout shared by the copies of a graph that share its data; filled at most once by
  /// concurrent readers (under a lock), read without one, emptied by the graph's one writer.
  class LayoutCache {
   public:
    LayoutCache() = default;
    LayoutCache(const LayoutCache& other);
    LayoutCache& operator=(const LayoutCache&) = delete;
    const Layout* get() const { return raw_.load(std::memory_order_acquire); }
    void fill(const Graph& graph, const std::vector<OpId>& order) const;
    void clear();

   private:
    mutable std::mutex mutex_;
    mutable std::shared_ptr<const Layout> owner_;
    mutable std::atomic<const Layout*> raw_{nullptr};
  };
  struct Data {
    Graph graph;
    std::unordered_map<std::string, OpId> index;
    LayoutCache layout;
  };
  /// The data to change, no longer shared with any copy.
  Data& mutable_data();
  /// What a moved-from graph holds: shared, so that its first change copies it.
  static const std::shared_ptr<Data>& empty_data();

  std::string name_;
  std::shared_ptr<Data> data_;  ///< shared by copies until one changes; never null
};

}  // namespace placesim
