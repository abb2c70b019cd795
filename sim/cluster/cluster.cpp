#include "sim/cluster/cluster.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>

namespace placesim {
namespace {
// Route weight of a hop: what a 1 MiB message pays on it. Favors NVLink over PCIe detours
// while still counting latency for small-message paths.
constexpr double kRoutingReferenceBytes = 1024.0 * 1024.0;
}  // namespace

DeviceId Cluster::add_device(ClusterDevice device, std::string vertex_name) {
  DeviceId id = devices_.size();
  VertexId vertex = vertices_.size();
  bool forwards = device.spec.kind != DeviceKind::kGpu;
  vertices_.push_back({std::move(vertex_name), id, forwards});
  adjacency_.emplace_back();
  device.vertex = vertex;
  if (device.name.task && device.name.kind && device.name.index) {
    by_task_kind_index_[task_kind_index_key(*device.name.task, *device.name.kind, *device.name.index)].push_back(id);
  }
  devices_.push_back(std::move(device));
  return id;
}

uint64_t Cluster::task_kind_index_key(int task, DeviceKind kind, int index) {
  // Task and index are parsed from names as non-negative ints: 31 bits each, 2 bits of kind.
  return (static_cast<uint64_t>(static_cast<uint32_t>(task)) << 33) | (static_cast<uint64_t>(kind) << 31) |
         static_cast<uint64_t>(static_cast<uint32_t>(index) & 0x7fffffffu);
}

VertexId Cluster::add_switch(std::string switch_name) {
  vertices_.push_back({std::move(switch_name), std::nullopt, true});
  adjacency_.emplace_back();
  return vertices_.size() - 1;
}

LinkId Cluster::add_link(VertexId a, VertexId b, LinkSpec spec) {
  LinkId id = links_.size();
  links_.push_back({vertices_.at(a).name + "<->" + vertices_.at(b).name, a, b, std::move(spec)});
  adjacency_[a].push_back(id);
  adjacency_[b].push_back(id);
  route_cache_.clear();
  ring_memo_.clear();
  channel_memo_.clear();
  chain_memo_.clear();
  scratch_.link_weights_current = false;
  dead_ends_.current = false;
  return id;
}

void Cluster::scale_link_bandwidth(LinkId link, double factor) {
  links_.at(link).spec.bandwidth_bytes_per_second *= factor;
  if (factor != 1.0) links_rescaled_ = true;
  route_cache_.clear();
  ring_memo_.clear();
  channel_memo_.clear();
  chain_memo_.clear();
  scratch_.link_weights_current = false;
}

std::optional<VertexId> Cluster::find_vertex(const std::string& vertex_name) const {
  for (VertexId v = 0; v < vertices_.size(); ++v) {
    if (vertices_[v].name == vertex_name) return v;
  }
  return std::nullopt;
}

int Cluster::node_count() const {
  int nodes = 0;
  for (const auto& d : devices_) nodes = std::max(nodes, d.node + 1);
  return nodes;
}

std::vector<DeviceId> Cluster::match(const DeviceName& spec) const {
  std::vector<DeviceId> found;
  if (spec.task && spec.kind && spec.index && *spec.task >= 0 && *spec.index >= 0) {
    auto bucket = by_task_kind_index_.find(task_kind_index_key(*spec.task, *spec.kind, *spec.index));
    if (bucket == by_task_kind_index_.end()) return found;
    for (DeviceId id : bucket->second) {
      if (spec.matches(devices_[id].name)) found.push_back(id);
    }
    return found;
  }
  for (DeviceId id = 0; id < devices_.size(); ++id) {
    if (spec.matches(devices_[id].name)) found.push_back(id);
  }
  return found;
}

std::optional<DeviceId> Cluster::find_device(const std::string& text) const {
  auto spec = DeviceName::parse(text, nullptr);
  if (!spec || !spec->kind) return std::nullopt;
  DeviceName wanted = *spec;
  if (!wanted.index) return std::nullopt;
  auto found = match(wanted);
  if (found.size() == 1) return found.front();
  // A shorthand like "/gpu:0" means the first task's device when several tasks have a GPU:0.
  for (DeviceId id : found) {
    if (devices_[id].node == 0) return id;
  }
  return std::nullopt;
}

Cluster::SearchScratch& Cluster::begin_search() const {
  SearchScratch& scratch = scratch_;
  if (scratch.stamp.size() != vertices_.size() || scratch.link_weight.size() != links_.size()) {
    scratch.distance.assign(vertices_.size(), 0);
    scratch.via.assign(vertices_.size(), RouteHop{});
    scratch.stamp.assign(vertices_.size(), 0);
    scratch.generation = 0;
    scratch.link_weight.resize(links_.size());
    scratch.link_weights_current = false;
  }
  if (!scratch.link_weights_current) {
    for (LinkId l = 0; l < links_.size(); ++l) {
      scratch.link_weight[l] = links_[l].spec.latency_seconds + kRoutingReferenceBytes / links_[l].spec.bandwidth_bytes_per_second;
    }
    scratch.link_weights_current = true;
  }
  if (++scratch.generation == 0) {  // wrapped: forget every stamp
    std::fill(scratch.stamp.begin(), scratch.stamp.end(), 0);
    scratch.generation = 1;
  }
  scratch.heap.clear();
  return scratch;
}

template <typename OnPop, typename ShouldPush>
void Cluster::search(VertexId source, OnPop on_pop, ShouldPush should_push, bool skip_dead_regions) const {
  SearchScratch& scratch = begin_search();
  const uint32_t generation = scratch.generation;
  auto& heap = scratch.heap;
  const auto later = std::greater<std::pair<double, VertexId>>();
  scratch.source = source;
  scratch.distance[source] = 0;
  scratch.stamp[source] = generation;
  heap.push_back({0, source});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const double d = heap.back().first;
    const VertexId v = heap.back().second;
    heap.pop_back();
    if (d > scratch.distance[v]) continue;
    if (v != source && !on_pop(v, d)) return;
    if (v != source && !vertices_[v].forwards) continue;
    auto relax = [&](LinkId l) {
      const ClusterLink& link = links_[l];
      VertexId w = link.a == v ? link.b : link.a;
      const double candidate = d + scratch.link_weight[l];
      if (scratch.stamp[w] != generation || candidate < scratch.distance[w]) {
        scratch.distance[w] = candidate;
        scratch.stamp[w] = generation;
        scratch.via[w] = RouteHop{l, link.a == v};
        if (!should_push(w)) return;
        heap.push_back({candidate, w});
        std::push_heap(heap.begin(), heap.end(), later);
      }
    };
    const DeadEnds& dead = dead_ends_;
    if (!skip_dead_regions || dead.hub[v] == DeadEnds::kNone) {
      for (LinkId l : adjacency_[v]) relax(l);
      continue;
    }
    // Links to vertices of different regions can be relaxed in any order (each sets only its
    // own vertex; the heap pops by distance, then vertex): the open links, then the marked regions'.
    for (LinkId l : dead.open_links[dead.hub[v]]) relax(l);
    auto marked = std::lower_bound(dead.marked.begin(), dead.marked.end(), std::make_pair(v, uint32_t{0}));
    for (; marked != dead.marked.end() && marked->first == v; ++marked) {
      for (LinkId l : dead.entry_links[marked->second]) relax(l);
    }
  }
}

std::vector<RouteHop> Cluster::route_in_scratch(VertexId from, VertexId to) const {
  std::vector<RouteHop> hops;
  for (VertexId v = to; v != from;) {
    RouteHop hop = scratch_.via[v];
    hops.push_back(hop);
    v = hop.a_to_b ? links_[hop.link].a : links_[hop.link].b;
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

void Cluster::find_dead_ends() const {
  DeadEnds& dead = dead_ends_;
  if (dead.current && dead.region_of.size() == vertices_.size()) return;
  const size_t n = vertices_.size();
  constexpr uint32_t kUnvisited = UINT32_MAX;
  constexpr VertexId kNoVertex = static_cast<VertexId>(-1);
  std::vector<uint32_t> discovered(n, kUnvisited), low(n, 0);
  std::vector<VertexId> dfs_parent(n, kNoVertex);
  std::vector<LinkId> parent_link(n, static_cast<LinkId>(-1));
  std::vector<bool> region_root(n, false);
  std::vector<VertexId> preorder;
  preorder.reserve(n);
  // Rooted at the best-connected vertex (a core switch), so that regions are the edges' parts.
  VertexId root = 0;
  for (VertexId v = 0; v < n; ++v) {
    if (adjacency_[v].size() > adjacency_[root].size()) root = v;
  }
  uint32_t clock = 0;
  std::vector<std::pair<VertexId, size_t>> stack;
  if (n > 0) {  // vertices of another component (none in a loaded cluster) stay in no region
    discovered[root] = low[root] = clock++;
    preorder.push_back(root);
    stack.push_back({root, 0});
  }
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next < adjacency_[v].size()) {
      const LinkId l = adjacency_[v][next++];
      const VertexId w = links_[l].a == v ? links_[l].b : links_[l].a;
      if (discovered[w] == kUnvisited) {
        dfs_parent[w] = v;
        parent_link[w] = l;
        discovered[w] = low[w] = clock++;
        preorder.push_back(w);
        stack.push_back({w, 0});
      } else if (l != parent_link[v]) {
        low[v] = std::min(low[v], discovered[w]);
      }
      continue;
    }
    const VertexId finished = v;
    stack.pop_back();
    const VertexId p = dfs_parent[finished];
    if (p == kNoVertex) continue;
    low[p] = std::min(low[p], low[finished]);
    if (low[finished] >= discovered[p]) region_root[finished] = true;  // p separates its subtree
  }
  dead.region_of.assign(n, DeadEnds::kNone);
  dead.parent.clear();
  for (VertexId v : preorder) {  // parents before children
    const VertexId p = dfs_parent[v];
    const uint32_t outer = p == kNoVertex ? DeadEnds::kNone : dead.region_of[p];
    if (region_root[v]) {
      dead.region_of[v] = static_cast<uint32_t>(dead.parent.size());
      dead.parent.push_back(outer);
    } else {
      dead.region_of[v] = outer;
    }
  }
  dead.occupied.assign(dead.parent.size(), 0);
  dead.generation = 0;
  dead.attach.assign(dead.parent.size(), kNoVertex);
  for (VertexId v : preorder) {
    if (region_root[v]) dead.attach[dead.region_of[v]] = dfs_parent[v];
  }
  // A region touches the rest of the network only at the vertex it hangs off, so a neighbour w
  // of v lies in a region hanging off v exactly when attach[region_of[w]] == v.
  dead.entry_links.assign(dead.parent.size(), {});
  dead.hub.assign(n, DeadEnds::kNone);
  dead.open_links.clear();
  for (VertexId v = 0; v < n; ++v) {
    std::vector<LinkId> open;
    bool hub = false;
    for (LinkId l : adjacency_[v]) {
      const VertexId w = links_[l].a == v ? links_[l].b : links_[l].a;
      const uint32_t region = dead.region_of[w];
      if (region != DeadEnds::kNone && dead.attach[region] == v) {
        dead.entry_links[region].push_back(l);
        hub = true;
      } else {
        open.push_back(l);
      }
    }
    if (!hub) continue;
    dead.hub[v] = static_cast<uint32_t>(dead.open_links.size());
    dead.open_links.push_back(std::move(open));
  }
  dead.current = true;
}

void Cluster::mark_search_ends(const std::vector<VertexId>& ends) const {
  find_dead_ends();
  DeadEnds& dead = dead_ends_;
  if (++dead.generation == 0) {
    std::fill(dead.occupied.begin(), dead.occupied.end(), 0);
    dead.generation = 1;
  }
  dead.marked.clear();
  for (VertexId end : ends) {
    for (uint32_t r = dead.region_of[end]; r != DeadEnds::kNone && dead.occupied[r] != dead.generation;
         r = dead.parent[r]) {
      dead.occupied[r] = dead.generation;
      dead.marked.push_back({dead.attach[r], r});
    }
  }
  std::sort(dead.marked.begin(), dead.marked.end());
}

std::optional<std::vector<RouteHop>> Cluster::shortest_path(VertexId from, VertexId to) const {
  bool found = false;
  mark_search_ends({from, to});
  search(
      from,
      [&](VertexId v, double) {
        found = v == to;
        return !found;
      },
      // A vertex that forwards nothing matters only as the destination.
      [&](VertexId w) { return (w == to || vertices_[w].forwards) && !dead_end(w); }, true);
  if (!found) return std::nullopt;
  return route_in_scratch(from, to);
}

void Cluster::visit_devices_by_distance(DeviceId from, const std::function<bool(DeviceId, double)>& visit,
                                        const std::vector<bool>* wanted,
                                        const std::vector<DeviceId>* candidates) const {
  if (wanted) {
    std::vector<VertexId> ends{devices_.at(from).vertex};
    auto add_if_wanted = [&](DeviceId id) {
      if ((*wanted)[id]) ends.push_back(devices_[id].vertex);
    };
    if (candidates) {
      for (DeviceId id : *candidates) add_if_wanted(id);
    } else {
      for (DeviceId id = 0; id < devices_.size(); ++id) add_if_wanted(id);
    }
    mark_search_ends(ends);
  }
  search(
      devices_.at(from).vertex,
      [&](VertexId v, double d) { return !vertices_[v].device || visit(*vertices_[v].device, d); },
      [&](VertexId w) {
        if (!wanted) return true;
        const NetworkVertex& vertex = vertices_[w];
        return (vertex.forwards || !vertex.device || (*wanted)[*vertex.device]) && !dead_end(w);
      },
      wanted != nullptr);
}

uint32_t Cluster::region_of(VertexId vertex) const {
  find_dead_ends();
  return dead_ends_.region_of.at(vertex);
}

uint32_t Cluster::enclosing_region(uint32_t region) const {
  find_dead_ends();
  return dead_ends_.parent.at(region);
}

VertexId Cluster::region_attach_vertex(uint32_t region) const {
  find_dead_ends();
  return dead_ends_.attach.at(region);
}

std::vector<double> Cluster::vertex_distances(VertexId from, const std::vector<VertexId>& targets) const {
  std::vector<VertexId> ends{from};
  ends.insert(ends.end(), targets.begin(), targets.end());
  mark_search_ends(ends);
  std::vector<VertexId> sought = targets;  // sorted, without `from`
  std::sort(sought.begin(), sought.end());
  sought.erase(std::unique(sought.begin(), sought.end()), sought.end());
  sought.erase(std::remove(sought.begin(), sought.end(), from), sought.end());
  auto is_sought = [&](VertexId v) { return std::binary_search(sought.begin(), sought.end(), v); };
  size_t left = sought.size();
  if (left > 0) {
    search(
        from, [&](VertexId v, double) { return !is_sought(v) || --left > 0; },
        [&](VertexId w) { return (vertices_[w].forwards || is_sought(w)) && !dead_end(w); }, true);
  }
  std::vector<double> distances;
  distances.reserve(targets.size());
  for (VertexId target : targets) {
    if (target == from) {
      distances.push_back(0);
    } else if (left > 0 && scratch_.stamp[target] != scratch_.generation) {
      distances.push_back(std::numeric_limits<double>::infinity());
    } else {
      distances.push_back(scratch_.distance[target]);
    }
  }
  return distances;
}

void Cluster::remember_visited_route(DeviceId from, DeviceId to) const {
  const VertexId source = devices_.at(from).vertex, target = devices_.at(to).vertex;
  if (from == to || scratch_.source != source || scratch_.stamp.size() != vertices_.size() ||
      scratch_.stamp[target] != scratch_.generation || route_cache_.count({from, to})) {
    return;
  }
  route_cache_.emplace(std::make_pair(from, to), route_in_scratch(source, target));
}

void Cluster::prepare_routes(DeviceId from, const std::vector<DeviceId>& targets) const {
  std::vector<DeviceId> missing;
  for (DeviceId to : targets) {
    if (to != from && !route_cache_.count({from, to})) missing.push_back(to);
  }
  if (missing.size() < 2) return;  // route() alone is as fast
  const VertexId source = devices_.at(from).vertex;
  std::vector<VertexId> ends{source};
  for (DeviceId to : missing) ends.push_back(devices_.at(to).vertex);
  mark_search_ends(ends);
  // The whole search: a vertex that forwards nothing ends no route but its own, and its
  // distance is final once every neighbour that forwards has been popped; no need to pop it.
  search(
      source, [](VertexId, double) { return true; },
      [&](VertexId w) { return vertices_[w].forwards && !dead_end(w); }, true);
  for (DeviceId to : missing) {
    const VertexId target = devices_.at(to).vertex;
    if (scratch_.stamp[target] != scratch_.generation) continue;  // unreachable: route() will say so
    route_cache_.emplace(std::make_pair(from, to), route_in_scratch(source, target));
  }
}

bool Cluster::reachable(DeviceId from, DeviceId to) const {
  if (from == to) return true;
  if (route_cache_.count({from, to})) return true;
  auto path = shortest_path(devices_.at(from).vertex, devices_.at(to).vertex);
  if (path) route_cache_[{from, to}] = std::move(*path);
  return path.has_value();
}

const std::vector<RouteHop>& Cluster::route(DeviceId from, DeviceId to) const {
  static const std::vector<RouteHop> kEmpty;
  if (from == to) return kEmpty;
  auto it = route_cache_.find({from, to});
  if (it != route_cache_.end()) return it->second;
  auto path = shortest_path(devices_.at(from).vertex, devices_.at(to).vertex);
  if (!path) {
    throw std::runtime_error("no route from " + devices_[from].name.canonical() + " to " +
                             devices_[to].name.canonical());
  }
  return route_cache_.emplace(std::make_pair(from, to), std::move(*path)).first->second;
}

double Cluster::route_latency_seconds(DeviceId from, DeviceId to) const {
  double latency = 0;
  for (const RouteHop& hop : route(from, to)) latency += links_[hop.link].spec.latency_seconds;
  return latency;
}

double Cluster::route_bandwidth_bytes_per_second(DeviceId from, DeviceId to) const {
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const RouteHop& hop : route(from, to)) {
    bandwidth = std::min(bandwidth, links_[hop.link].spec.bandwidth_bytes_per_second);
  }
  return bandwidth;
}

}  // namespace placesim
