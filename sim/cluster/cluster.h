// Cluster: the devices a step runs on and the network joining them. The network is a graph
// of vertices (devices and switches) and full-duplex links; routes between devices are
// shortest paths (latency + 1 MiB / bandwidth per hop) that may pass through switches, CPUs
// (root complexes, QPI) and TPUs (ICI routes through chips), but never through a GPU.
// Immutable once built; route() caches and is not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/cluster/device_spec.h"
#include "sim/cluster/link_spec.h"
#include "sim/core/device_name.h"

namespace placesim {

struct CollectiveProfile;  // sim/cluster/collective_profile.h
using DeviceId = std::size_t;
using LinkId = std::size_t;
using VertexId = std::size_t;

struct ClusterDevice {
  DeviceName name;  ///< full TensorFlow name
  DeviceSpec spec;
  int node = 0;      ///< which machine (TensorFlow task) it is in
  VertexId vertex = 0;
  double speed_factor = 1.0;  ///< < 1 slows the device (stragglers, heterogeneity)
  /// The device whose compute this one shares (a second CUDA stream or MPS client on one GPU):
  /// concurrent tasks of the two split its speed. Itself when it has its own hardware.
  std::optional<DeviceId> shares_compute_with;
};

struct NetworkVertex {
  std::string name;  ///< "task:0/GPU:1", "task:0/PCIe:0", "fabric/spine:0"
  std::optional<DeviceId> device;
  bool forwards = true;  ///< can a route pass through it
};

struct ClusterLink {
  std::string name;  ///< "task:0/GPU:0<->GPU:1"
  VertexId a = 0, b = 0;
  LinkSpec spec;  ///< bandwidth already multiplied by the brick count
};

/// One hop of a route: a link and its direction (true = from a to b).
struct RouteHop {
  LinkId link = 0;
  bool a_to_b = true;
};

class Cluster {
 public:
  std::string name;
  std::string description;
  /// Measured collective curves of one machine (sim/cluster/collective_profile.h), from the
  /// template's "collective_profile"; null: collectives run at link rate.
  std::shared_ptr<const CollectiveProfile> collective_profile;
  /// Network cards of each node joined to the fabric (clusters built from a template with
  /// several nodes); empty when not known.
  std::vector<int> nics_per_node;

  DeviceId add_device(ClusterDevice device, std::string vertex_name);
  VertexId add_switch(std::string name);
  LinkId add_link(VertexId a, VertexId b, LinkSpec spec);
  /// Degrades (factor < 1) or upgrades a link's bandwidth; routes are recomputed.
  void scale_link_bandwidth(LinkId link, double factor);
  /// Whether scale_link_bandwidth() changed any link (measured curves then no longer apply).
  bool links_rescaled() const { return links_rescaled_; }

  const std::vector<ClusterDevice>& devices() const { return devices_; }
  std::vector<ClusterDevice>& devices() { return devices_; }
  const ClusterDevice& device(DeviceId id) const { return devices_.at(id); }
  const std::vector<NetworkVertex>& vertices() const { return vertices_; }
  const std::vector<ClusterLink>& links() const { return links_; }
  std::optional<VertexId> find_vertex(const std::string& name) const;
  int node_count() const;

  /// Devices matching a (partial) TensorFlow spec, in cluster order. A spec naming the task, kind
  /// and index ("/task:12/device:GPU:3", as sweeps fill in) is looked up in an index; others scan.
  std::vector<DeviceId> match(const DeviceName& spec) const;
  /// The device with this exact full name (canonical, legacy or shorthand that is unique).
  std::optional<DeviceId> find_device(const std::string& name) const;

  /// Links from `from` to `to`; empty when from == to. Throws std::runtime_error if unreachable
  /// (cluster loaders check connectivity first).
  const std::vector<RouteHop>& route(DeviceId from, DeviceId to) const;
  bool reachable(DeviceId from, DeviceId to) const;
  /// Computes and caches the routes from `from` to every device of `targets` with one search
  /// (faster than one route() each when the targets are far).
  void prepare_routes(DeviceId from, const std::vector<DeviceId>& targets) const;
  /// Sum of latencies and the bottleneck bandwidth along a route (for analytical estimates).
  double route_latency_seconds(DeviceId from, DeviceId to) const;
  double route_bandwidth_bytes_per_second(DeviceId from, DeviceId to) const;
  /// Calls `visit(device, distance)` for every device reachable from `from` (not `from` itself),
  /// nearest first by the routing metric (sum over hops of latency + 1 MiB / bandwidth), until
  /// `visit` returns false. One search, however many devices it visits. `visit` must not
  /// search the cluster itself (route(), reachable()): the searches share one scratch.
  /// With `wanted` (indexed by DeviceId), the search looks only where a wanted device may be
  /// reached: devices that forward nothing (GPUs) are visited only when wanted, and parts of the
  /// network that hang off one vertex and hold no wanted device (and not `from`) not at all.
  /// `candidates`, when given with `wanted`, lists every wanted device (others may be listed too):
  /// the search then finds the wanted devices' regions from it instead of from every device.
  void visit_devices_by_distance(DeviceId from, const std::function<bool(DeviceId, double)>& visit,
                                 const std::vector<bool>* wanted = nullptr,
                                 const std::vector<DeviceId>* candidates = nullptr) const;
  /// Caches the route to `to` that the last visit_devices_by_distance(from, ...) found, so that
  /// route(from, to) need not search again. `to` must be a device that visit was called with;
  /// does nothing if no search has run from `from` since.
  void remember_visited_route(DeviceId from, DeviceId to) const;

  /// The network's dead-end regions (see DeadEnds below), for walks that split routes at the
  /// vertices regions hang off: every route between a vertex inside a region and one outside it
  /// passes through that region's attach vertex. Regions nest; kNoRegion stands for none.
  static constexpr uint32_t kNoRegion = UINT32_MAX;
  /// The innermost region holding `vertex`, or kNoRegion.
  uint32_t region_of(VertexId vertex) const;
  /// The region holding `region`, or kNoRegion.
  uint32_t enclosing_region(uint32_t region) const;
  /// The vertex `region` hangs off (outside it, in its enclosing region or in none).
  VertexId region_attach_vertex(uint32_t region) const;
  /// Distances by the routing metric from `from` to each of `targets` (infinity where
  /// unreachable, 0 for `from` itself), with one search that stops once it has found them all.
  std::vector<double> vertex_distances(VertexId from, const std::vector<VertexId>& targets) const;

  /// Memo of the topology rings built over device groups (sim/plan/collective_schedule.h), so
  /// that the thousands of all-reduces of one group order it once. Not thread-safe, like route().
  std::map<std::vector<DeviceId>, std::vector<DeviceId>>& ring_memo() const { return ring_memo_; }
  /// The same for the rings of NCCL's channels over a group (sim/plan/ring_channels.h).
  std::map<std::vector<DeviceId>, std::vector<std::vector<DeviceId>>>& channel_memo() const { return channel_memo_; }
  /// The same for the chains of NCCL's trees through a machine's members (sim/plan/nccl_trees.h).
  std::map<std::vector<DeviceId>, std::vector<DeviceId>>& chain_memo() const { return chain_memo_; }

 private:
  std::optional<std::vector<RouteHop>> shortest_path(VertexId from, VertexId to) const;
  /// (task, kind, index) of a device name, the key of by_task_kind_index_.
  static uint64_t task_kind_index_key(int task, DeviceKind kind, int index);
  std::vector<ClusterDevice> devices_;
  /// Devices by task, kind and index, filled by add_device (names do not change afterwards):
  /// resolving each of a sweep's 800,000 replica names by a scan of 1,000,000 devices took minutes.
  std::unordered_map<uint64_t, std::vector<DeviceId>> by_task_kind_index_;
  std::vector<NetworkVertex> vertices_;
  std::vector<ClusterLink> links_;
  bool links_rescaled_ = false;
  std::vector<std::vector<LinkId>> adjacency_;
  /// Reused by every search (a route of a 3,000-GPU cluster costs a search over ~6,000
  /// vertices; allocating and clearing per search cost more than the search).
  struct SearchScratch {
    std::vector<double> distance;
    std::vector<RouteHop> via;
    std::vector<uint32_t> stamp;  ///< distance/via are valid where stamp == generation
    uint32_t generation = 0;
    std::vector<double> link_weight;  ///< latency + 1 MiB / bandwidth per link
    bool link_weights_current = false;  ///< cleared when a link is added or rescaled
    VertexId source = 0;                ///< of the last search
    std::vector<std::pair<double, VertexId>> heap;
  };
  /// Starts a search: sizes the scratch, advances the generation, returns it.
  SearchScratch& begin_search() const;
  /// Dijkstra from `source` by link weight into the scratch (distance, via); routes never pass
  /// through a vertex that does not forward. `on_pop(v, distance)` sees each vertex but the
  /// source in order of distance and returns false to stop; a relaxed vertex is queued only if
  /// `should_push(w)`. With `skip_dead_regions` (after mark_search_ends), the links into the
  /// unmarked regions hanging off a vertex are not even looked at: should_push would refuse
  /// every vertex behind them, and nothing reads what relaxing them would record, so the search
  /// finds the same routes, without a scan of a 100,000-node switch's links per search.
  template <typename OnPop, typename ShouldPush>
  void search(VertexId source, OnPop on_pop, ShouldPush should_push, bool skip_dead_regions = false) const;
  /// The route to `to` recorded by the last search from `from`.
  std::vector<RouteHop> route_in_scratch(VertexId from, VertexId to) const;
  mutable SearchScratch scratch_;
  /// Dead ends: a region is a part of the network that hangs off one vertex (an articulation
  /// point), like a node whose NICs all reach one leaf switch, or a leaf with its nodes under a
  /// single spine. A shortest route never enters a region that holds neither of its ends (it
  /// would leave through the vertex it came in by), so searches for given ends skip those: a
  /// route across a 3,000-GPU fat tree then looks at ~100 vertices instead of ~6,000.
  struct DeadEnds {
    static constexpr uint32_t kNone = UINT32_MAX;
    bool current = false;            ///< cleared when the network changes
    std::vector<uint32_t> region_of;  ///< by vertex: the innermost region holding it, or kNone
    std::vector<uint32_t> parent;     ///< by region: the region holding it, or kNone
    std::vector<uint32_t> occupied;   ///< by region: == generation if it holds an end of the search
    uint32_t generation = 0;
    std::vector<VertexId> attach;     ///< by region: the vertex it hangs off (outside it)
    std::vector<std::vector<LinkId>> entry_links;  ///< by region: the links from `attach` into it
    /// By vertex: kNone, or when regions hang off it, its index in `open_links`: its links
    /// that lead into none of them, in adjacency order.
    std::vector<uint32_t> hub;
    std::vector<std::vector<LinkId>> open_links;
    /// (attach, region) of the regions marked for the current search, sorted.
    std::vector<std::pair<VertexId, uint32_t>> marked;
  };
  mutable DeadEnds dead_ends_;
  /// Finds the regions (one depth-first search for articulation points), if not current.
  void find_dead_ends() const;
  /// Marks the regions holding any of `ends` (vertices) for the next search.
  void mark_search_ends(const std::vector<VertexId>& ends) const;
  /// Whether the marked search can skip `vertex`: it lies in a region holding none of its ends.
  bool dead_end(VertexId vertex) const {
    const uint32_t region = dead_ends_.region_of[vertex];
    return region != DeadEnds::kNone && dead_ends_.occupied[region] != dead_ends_.generation;
  }
  mutable std::map<std::pair<DeviceId, DeviceId>, std::vector<RouteHop>> route_cache_;
  mutable std::map<std::vector<DeviceId>, std::vector<DeviceId>> ring_memo_;
  mutable std::map<std::vector<DeviceId>, std::vector<std::vector<DeviceId>>> channel_memo_;
  mutable std::map<std::vector<DeviceId>, std::vector<DeviceId>> chain_memo_;
};

}  // namespace placesim
