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
  devices_.push_back(std::move(device));
  return id;
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
  return id;
}

void Cluster::scale_link_bandwidth(LinkId link, double factor) {
  links_.at(link).spec.bandwidth_bytes_per_second *= factor;
  route_cache_.clear();
  ring_memo_.clear();
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

std::optional<std::vector<RouteHop>> Cluster::shortest_path(VertexId from, VertexId to) const {
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<double> distance(vertices_.size(), infinity);
  std::vector<std::optional<RouteHop>> via(vertices_.size());
  using Entry = std::pair<double, VertexId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  distance[from] = 0;
  frontier.push({0, from});
  while (!frontier.empty()) {
    auto [d, v] = frontier.top();
    frontier.pop();
    if (d > distance[v]) continue;
    if (v == to) break;
    if (v != from && !vertices_[v].forwards) continue;
    for (LinkId l : adjacency_[v]) {
      const ClusterLink& link = links_[l];
      VertexId w = link.a == v ? link.b : link.a;
      double weight = link.spec.latency_seconds + kRoutingReferenceBytes / link.spec.bandwidth_bytes_per_second;
      if (d + weight < distance[w]) {
        distance[w] = d + weight;
        via[w] = RouteHop{l, link.a == v};
        frontier.push({distance[w], w});
      }
    }
  }
  if (distance[to] == infinity) return std::nullopt;
  std::vector<RouteHop> hops;
  for (VertexId v = to; v != from;) {
    RouteHop hop = *via[v];
    hops.push_back(hop);
    v = hop.a_to_b ? links_[hop.link].a : links_[hop.link].b;
  }
  std::reverse(hops.begin(), hops.end());
  return hops;
}

void Cluster::visit_devices_by_distance(DeviceId from, const std::function<bool(DeviceId, double)>& visit) const {
  const double infinity = std::numeric_limits<double>::infinity();
  const VertexId source = devices_.at(from).vertex;
  std::vector<double> distance(vertices_.size(), infinity);
  using Entry = std::pair<double, VertexId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  distance[source] = 0;
  frontier.push({0, source});
  while (!frontier.empty()) {
    auto [d, v] = frontier.top();
    frontier.pop();
    if (d > distance[v]) continue;
    if (v != source && vertices_[v].device && !visit(*vertices_[v].device, d)) return;
    if (v != source && !vertices_[v].forwards) continue;
    for (LinkId l : adjacency_[v]) {
      const ClusterLink& link = links_[l];
      VertexId w = link.a == v ? link.b : link.a;
      double weight = link.spec.latency_seconds + kRoutingReferenceBytes / link.spec.bandwidth_bytes_per_second;
      if (d + weight < distance[w]) {
        distance[w] = d + weight;
        frontier.push({distance[w], w});
      }
    }
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
