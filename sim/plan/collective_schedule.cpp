#include "sim/plan/collective_schedule.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "sim/plan/bandwidth_ring.h"
#include "sim/plan/nccl_cost_model.h"
#include "sim/plan/nccl_trees.h"
#include "sim/plan/nearest_neighbour_ring.h"
#include "sim/plan/region_ring.h"
#include "sim/plan/ring_channels.h"

namespace placesim {
namespace {

bool power_of_two(size_t n) { return n > 0 && (n & (n - 1)) == 0; }

size_t floor_log2(size_t n) {
  size_t log = 0;
  while (n > 1) {
    n >>= 1;
    ++log;
  }
  return log;
}

/// The group's devices per node, each node's in topology-ring order.
std::vector<std::vector<DeviceId>> by_node(const std::vector<DeviceId>& group, const Cluster& cluster) {
  std::vector<std::vector<DeviceId>> result = members_by_node(group, cluster);
  for (auto& node : result) node = topology_ring(node, cluster);
  return result;
}

/// The mean route latency of a ring's hops (each member to the next, the last to the first).
double mean_hop_latency(const std::vector<DeviceId>& ring, const Cluster& cluster) {
  if (ring.size() < 2) return 0;
  double sum = 0;
  for (size_t i = 0; i < ring.size(); ++i) sum += cluster.route_latency_seconds(ring[i], ring[(i + 1) % ring.size()]);
  return sum / static_cast<double>(ring.size());
}

class ScheduleWriter {
 public:
  ScheduleWriter(CollectiveFidelity fidelity, const Cluster& cluster) : fidelity_(fidelity), cluster_(cluster) {}

  size_t add(DeviceId from, DeviceId to, double bytes, std::vector<size_t> deps, size_t latency_rounds = 1,
             double reduced_bytes = 0, double round_latency_seconds = -1) {
    steps_.push_back({from, to, bytes, std::move(deps), latency_rounds, reduced_bytes, round_latency_seconds});
    return steps_.size() - 1;
  }
  std::vector<CollectiveStep> take() { return std::move(steps_); }

  /// A ring pass of `rounds` rounds over `ring` moving `chunk` bytes per transfer, the first
  /// `reducing_rounds` of them added into the receiver's buffer. `entry[i]` are the steps
  /// participant i must have received before it first sends; returns, per participant, the last
  /// step into it.
  std::vector<std::vector<size_t>> ring_pass(const std::vector<DeviceId>& ring, size_t rounds, double chunk,
                                             const std::vector<std::vector<size_t>>& entry,
                                             size_t reducing_rounds = 0) {
    const size_t n = ring.size();
    std::vector<std::vector<size_t>> last_in = entry;
    if (n < 2 || rounds == 0) return last_in;
    if (fidelity_ == CollectiveFidelity::kPerPhase) return ring_phase(ring, rounds, chunk, entry, reducing_rounds);
    std::vector<std::optional<size_t>> last_out(n);
    for (size_t round = 0; round < rounds; ++round) {
      std::vector<std::vector<size_t>> next_in(n);
      for (size_t i = 0; i < n; ++i) {
        std::vector<size_t> deps = last_in[i];
        if (last_out[i]) deps.push_back(*last_out[i]);  // one send at a time on i's outgoing link
        size_t step = add(ring[i], ring[(i + 1) % n], chunk, deps, 1, round < reducing_rounds ? chunk : 0);
        last_out[i] = step;
        next_in[(i + 1) % n] = {step};
      }
      last_in = std::move(next_in);
    }
    return last_in;
  }

 private:
  // The pass as one step per hop: i forwards what it and i-1 hold, so it waits for both inputs.
  std::vector<std::vector<size_t>> ring_phase(const std::vector<DeviceId>& ring, size_t rounds, double chunk,
                                              const std::vector<std::vector<size_t>>& entry, size_t reducing_rounds) {
    const size_t n = ring.size();
    const double round_latency = mean_hop_latency(ring, cluster_);
    std::vector<std::vector<size_t>> last_in(n);
    for (size_t i = 0; i < n; ++i) {
      std::vector<size_t> deps = entry[i];
      const auto& before = entry[(i + n - 1) % n];
      deps.insert(deps.end(), before.begin(), before.end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      last_in[(i + 1) % n] = {add(ring[i], ring[(i + 1) % n], chunk * static_cast<double>(rounds), deps, rounds,
                                  chunk * static_cast<double>(reducing_rounds), round_latency)};
    }
    return last_in;
  }

  CollectiveFidelity fidelity_;
  const Cluster& cluster_;
  std::vector<CollectiveStep> steps_;
};

std::vector<std::vector<size_t>> no_entry(size_t n) { return std::vector<std::vector<size_t>>(n); }

/// Per-phase ring steps of several channels (no deps between them: each channel's pass is one
/// step per hop, all at once) with one step per hop: the channels that cross the same hop, where
/// no other hop of the collective shares a link direction of its route, as one step of their
/// bytes. Under max-min sharing k equal flows on a route of their own end when one flow of k times
/// the bytes does; the engine then keeps a few flows per machine where NCCL's rings across
/// machines (machine_channel_rings) would give it one per member per channel. A hop that shares
/// a direction with another keeps its flows. Steps with deps are left as they are.
std::vector<CollectiveStep> merge_parallel_hops(std::vector<CollectiveStep> steps, const Cluster& cluster) {
  for (const CollectiveStep& step : steps) {
    if (!step.deps.empty()) return steps;
  }
  std::map<std::pair<DeviceId, DeviceId>, std::vector<size_t>> by_hop;
  for (size_t i = 0; i < steps.size(); ++i) by_hop[{steps[i].from, steps[i].to}].push_back(i);
  std::map<std::pair<DeviceId, DeviceId>, std::vector<size_t>> directions;  // hop -> its route's link directions
  std::map<size_t, size_t> hops_through;                                     // link direction -> hops
  for (const auto& [hop, indices] : by_hop) {
    for (const RouteHop& link : cluster.route(hop.first, hop.second)) {
      const size_t direction = 2 * link.link + (link.a_to_b ? 1 : 0);
      directions[hop].push_back(direction);
      ++hops_through[direction];
    }
  }
  std::vector<CollectiveStep> merged;
  merged.reserve(by_hop.size());
  for (const auto& [hop, indices] : by_hop) {
    bool alone = true;
    for (size_t direction : directions[hop]) alone = alone && hops_through[direction] == 1;
    if (!alone || indices.size() == 1) {
      for (size_t i : indices) merged.push_back(steps[i]);
      continue;
    }
    CollectiveStep step = steps[indices.front()];
    for (size_t k = 1; k < indices.size(); ++k) {
      const CollectiveStep& other = steps[indices[k]];
      step.bytes += other.bytes;
      step.reduced_bytes += other.reduced_bytes;
      step.latency_rounds = std::max(step.latency_rounds, other.latency_rounds);
      step.round_latency_seconds = std::max(step.round_latency_seconds, other.round_latency_seconds);
    }
    merged.push_back(std::move(step));
  }
  return merged;
}

/// Whether a ring collective's channels are NCCL's rings across machines (machine_channel_rings).
bool rings_across_machines(const std::vector<std::vector<DeviceId>>& rings, const Cluster& cluster) {
  return rings.size() > 1 && members_by_node(rings.front(), cluster).size() > 1;
}

/// Where each member of a tree sits in tree.edges: the edges into it and the edge up from it.
struct TreeEdgeIndex {
  std::map<DeviceId, std::vector<size_t>> into;
  std::map<DeviceId, size_t> above;  ///< every member but the root
  explicit TreeEdgeIndex(const ReductionTree& tree) {
    for (size_t e = 0; e < tree.edges.size(); ++e) {
      into[tree.edges[e].parent].push_back(e);
      above[tree.edges[e].child] = e;
    }
  }
  /// `sent[e']` of every edge e' into `member`.
  std::vector<size_t> from_below(DeviceId member, const std::vector<size_t>& sent) const {
    std::vector<size_t> steps;
    if (auto it = into.find(member); it != into.end()) {
      for (size_t below : it->second) steps.push_back(sent[below]);
    }
    return steps;
  }
};

/// One of NCCL's trees moving `bytes` per round, as its kernel runs them: the reduce up the tree,
/// then the broadcast down it (src/collectives/device/all_reduce.h, runTreeUpDown: one loop over
/// the chunks up, then one down), each pipelined over `chunks` chunks. Up: chunk k leaves a child
/// once it has chunk k from every edge into it and has sent chunk k-1 (one send at a time per
/// edge and way). Down: chunk k leaves a parent once it has chunk k (the root: once its last
/// chunk came up every edge into it) and has sent chunk k-1. Steps in order: every chunk up
/// (the edges leaves first), then every chunk down (root first); allreduce_chunks reads them so.
void tree_rounds(ScheduleWriter& writer, const ReductionTree& tree, double bytes, size_t chunks) {
  const size_t edges = tree.edges.size();
  const TreeEdgeIndex index(tree);
  const double chunk = bytes / static_cast<double>(chunks);
  std::vector<size_t> up(edges), down(edges);
  for (size_t k = 0; k < chunks; ++k) {
    std::vector<size_t> now(edges);
    for (size_t e = 0; e < edges; ++e) {
      std::vector<size_t> deps = index.from_below(tree.edges[e].child, now);
      if (k > 0) deps.push_back(up[e]);
      now[e] = writer.add(tree.edges[e].child, tree.edges[e].parent, chunk, deps, 1, chunk);
    }
    up = std::move(now);
  }
  for (size_t k = 0; k < chunks; ++k) {
    std::vector<size_t> now(edges);
    for (size_t e = edges; e-- > 0;) {
      const DeviceId parent = tree.edges[e].parent;
      std::vector<size_t> deps;
      if (parent != tree.root) {
        deps.push_back(now[index.above.at(parent)]);
      } else if (k == 0) {
        deps = index.from_below(parent, up);
      }
      if (k > 0) deps.push_back(down[e]);
      now[e] = writer.add(parent, tree.edges[e].child, chunk, deps);
    }
    down = std::move(now);
  }
}

/// The same tree per phase, as flows: up each edge its first chunk (`head` bytes) once the
/// child has the first chunk from below, as above (the pipeline's fill), and the rest at once
/// after it (NCCL's chunks in flight); then down, once every transfer up has ended, the same.
/// Four steps per edge.
void tree_phase(ScheduleWriter& writer, const ReductionTree& tree, double bytes, double head) {
  const size_t edges = tree.edges.size();
  const TreeEdgeIndex index(tree);
  const double rest = bytes - head;
  std::vector<size_t> up(edges), reduced;
  for (size_t e = 0; e < edges; ++e) {
    up[e] = writer.add(tree.edges[e].child, tree.edges[e].parent, head, index.from_below(tree.edges[e].child, up), 1, head);
    reduced.push_back(up[e]);
    if (rest > 0) reduced.push_back(writer.add(tree.edges[e].child, tree.edges[e].parent, rest, {up[e]}, 1, rest));
  }
  std::vector<size_t> down(edges);
  for (size_t e = edges; e-- > 0;) {
    const DeviceId parent = tree.edges[e].parent;
    down[e] = writer.add(parent, tree.edges[e].child, head,
                         parent == tree.root ? reduced : std::vector<size_t>{down[index.above.at(parent)]});
    if (rest > 0) writer.add(parent, tree.edges[e].child, rest, {down[e]});
  }
}

/// `entry[i]`: the steps rank i waits for before its first send; returns, per rank, the steps of
/// its last round.
std::vector<std::vector<size_t>> halving_doubling_schedule(ScheduleWriter& writer, const std::vector<DeviceId>& group,
                                                           double bytes, std::vector<std::vector<size_t>> entry) {
  const size_t n = group.size();
  const size_t rounds = floor_log2(n);
  std::vector<std::vector<size_t>> last = std::move(entry);  // steps each rank depends on before its next send
  // Round k: every rank exchanges S / 2^(k+1) with the partner at distance N / 2^(k+1).
  auto exchange = [&](size_t k, bool reducing) {
    size_t distance = n >> (k + 1);
    double chunk = bytes / static_cast<double>(size_t{1} << (k + 1));
    std::vector<std::vector<size_t>> next(n);
    for (size_t i = 0; i < n; ++i) {
      size_t partner = i ^ distance;
      size_t step = writer.add(group[i], group[partner], chunk, last[i], 1, reducing ? chunk : 0);
      next[partner].push_back(step);
      next[i].push_back(step);
    }
    last = std::move(next);
  };
  for (size_t k = 0; k < rounds; ++k) exchange(k, true);  // recursive halving: the reduce-scatter
  for (size_t k = rounds; k-- > 0;) exchange(k, false);   // recursive doubling: the all-gather, mirrored
  return last;
}

/// The CPU of `device`'s node nearest to it (route latency + 1 MiB / bandwidth), where a host
/// staged collective keeps its buffer; none when the node has no CPU it reaches.
std::optional<DeviceId> node_host(DeviceId device, const Cluster& cluster) {
  std::optional<DeviceId> best;
  double best_metric = std::numeric_limits<double>::infinity();
  const int node = cluster.device(device).node;
  for (DeviceId d = 0; d < cluster.devices().size(); ++d) {
    const ClusterDevice& candidate = cluster.device(d);
    if (candidate.node != node || candidate.spec.kind != DeviceKind::kCpu || !cluster.reachable(device, d)) continue;
    const double metric = cluster.route_latency_seconds(device, d) + 1048576.0 / cluster.route_bandwidth_bytes_per_second(device, d);
    if (metric < best_metric) {
      best_metric = metric;
      best = d;
    }
  }
  return best;
}

/// The hosts of `nodes` (node_host of each node's first device), in node order.
std::vector<DeviceId> node_hosts(const std::vector<std::vector<DeviceId>>& nodes, const Cluster& cluster) {
  std::vector<DeviceId> hosts;
  for (const auto& node : nodes) hosts.push_back(node_host(node.front(), cluster).value());
  return hosts;
}

/// Gloo's CudaAllreduceHalvingDoubling with its default host workspace (facebookincubator/gloo
/// fab5bef, 2017-06-08, gloo/cuda_allreduce_halving_doubling.cc), as Caffe2 ran it in Goyal et
/// al. 2017 (section 4): inside each node a reduce onto its first device (here a ring
/// reduce-scatter, then every shard to that device: NCCL's reduce moves the same bytes over the
/// node's links), one copy of the buffer to the node's host, recursive halving-doubling between
/// the hosts (the received halves summed on their CPUs), the copy back, and a broadcast inside
/// the node (the shards from the first device, then a ring all-gather).
void host_halving_doubling_schedule(ScheduleWriter& writer, const std::vector<std::vector<DeviceId>>& nodes,
                                    const std::vector<DeviceId>& hosts, double bytes) {
  const size_t g = nodes.front().size();
  const size_t m = nodes.size();
  const double shard = bytes / static_cast<double>(g);
  std::vector<std::vector<size_t>> to_hosts(m);
  for (size_t node = 0; node < m; ++node) {
    const std::vector<DeviceId>& ring = nodes[node];
    const auto scattered = writer.ring_pass(ring, g - 1, shard, no_entry(g), g - 1);
    std::vector<size_t> at_root = scattered[0];
    for (size_t r = 1; r < g; ++r) at_root.push_back(writer.add(ring[r], ring[0], shard, scattered[r]));
    to_hosts[node] = {writer.add(ring[0], hosts[node], bytes, at_root)};
  }
  const auto reduced = halving_doubling_schedule(writer, hosts, bytes, std::move(to_hosts));
  for (size_t node = 0; node < m; ++node) {
    const std::vector<DeviceId>& ring = nodes[node];
    const size_t back = writer.add(hosts[node], ring[0], bytes, reduced[node]);
    std::vector<std::vector<size_t>> entry(g, std::vector<size_t>{back});
    for (size_t r = 1; r < g; ++r) entry[r] = {writer.add(ring[0], ring[r], shard, {back})};
    writer.ring_pass(ring, g - 1, shard, entry);
  }
}

void hierarchical_schedule(ScheduleWriter& writer, const std::vector<std::vector<DeviceId>>& nodes, double bytes) {
  const size_t g = nodes.front().size();
  const size_t m = nodes.size();
  const double shard = bytes / static_cast<double>(g);
  // 1. Reduce-scatter inside each node: local rank r ends with shard (r + 1) mod g reduced.
  std::vector<std::vector<std::vector<size_t>>> after_scatter(m);
  for (size_t node = 0; node < m; ++node) {
    after_scatter[node] = writer.ring_pass(nodes[node], g - 1, shard, no_entry(g), g - 1);
  }
  // 2. All-reduce each shard across nodes, among the devices of equal local rank ("rails").
  std::vector<std::vector<std::vector<size_t>>> after_rails(m, std::vector<std::vector<size_t>>(g));
  for (size_t r = 0; r < g; ++r) {
    std::vector<DeviceId> rail;
    std::vector<std::vector<size_t>> entry;
    for (size_t node = 0; node < m; ++node) {
      rail.push_back(nodes[node][r]);
      entry.push_back(after_scatter[node][r]);
    }
    auto exits = writer.ring_pass(rail, 2 * (m - 1), shard / static_cast<double>(m), entry, m - 1);
    for (size_t node = 0; node < m; ++node) after_rails[node][r] = exits[node];
  }
  // 3. All-gather inside each node.
  for (size_t node = 0; node < m; ++node) writer.ring_pass(nodes[node], g - 1, shard, after_rails[node]);
}

/// Hierarchical reduce-scatter: ring reduce-scatter of S inside each node (local rank r ends with
/// S/g reduced over its node), then ring reduce-scatter of that across the M nodes among devices
/// of equal local rank (each ends with S/(g M) reduced over all): the first half of
/// hierarchical_schedule.
void hierarchical_reduce_scatter(ScheduleWriter& writer, const std::vector<std::vector<DeviceId>>& nodes, double bytes) {
  const size_t g = nodes.front().size(), m = nodes.size();
  const double shard = bytes / static_cast<double>(g);
  std::vector<std::vector<std::vector<size_t>>> after_node(m);
  for (size_t node = 0; node < m; ++node) after_node[node] = writer.ring_pass(nodes[node], g - 1, shard, no_entry(g), g - 1);
  for (size_t r = 0; r < g; ++r) {
    std::vector<DeviceId> rail;
    std::vector<std::vector<size_t>> entry;
    for (size_t node = 0; node < m; ++node) {
      rail.push_back(nodes[node][r]);
      entry.push_back(after_node[node][r]);
    }
    writer.ring_pass(rail, m - 1, shard / static_cast<double>(m), entry, m - 1);
  }
}

/// Hierarchical all-gather, the mirror: ring all-gather across the nodes among devices of equal
/// local rank (each then holds S/g), then ring all-gather inside each node: the second half of
/// hierarchical_schedule.
void hierarchical_all_gather(ScheduleWriter& writer, const std::vector<std::vector<DeviceId>>& nodes, double bytes) {
  const size_t g = nodes.front().size(), m = nodes.size();
  const double shard = bytes / static_cast<double>(g);
  std::vector<std::vector<std::vector<size_t>>> after_rails(m, std::vector<std::vector<size_t>>(g));
  for (size_t r = 0; r < g; ++r) {
    std::vector<DeviceId> rail;
    for (size_t node = 0; node < m; ++node) rail.push_back(nodes[node][r]);
    auto exits = writer.ring_pass(rail, m - 1, shard / static_cast<double>(m), no_entry(m));
    for (size_t node = 0; node < m; ++node) after_rails[node][r] = exits[node];
  }
  for (size_t node = 0; node < m; ++node) writer.ring_pass(nodes[node], g - 1, shard, after_rails[node]);
}

struct PairCosts {
  double latency = 0;                                        // slowest pair
  double bandwidth = std::numeric_limits<double>::infinity();  // slowest pair
  void add(DeviceId a, DeviceId b, const Cluster& cluster) {
    if (a == b) return;
    if (!cluster.reachable(a, b)) {  // the algorithm cannot run here: infinitely slow
      latency = std::numeric_limits<double>::infinity();
      bandwidth = 0;
      return;
    }
    latency = std::max(latency, cluster.route_latency_seconds(a, b));
    bandwidth = std::min(bandwidth, cluster.route_bandwidth_bytes_per_second(a, b));
  }
};

/// The slowest of transfers that run at once, each from `first` to `second`: its route's
/// latency, and its route's narrowest link direction shared by every transfer routed through it.
PairCosts concurrent_pair_costs(const std::vector<std::pair<DeviceId, DeviceId>>& transfers, const Cluster& cluster) {
  PairCosts costs;
  // Transfers per link direction (2 x link + direction), and the directions used: thousands of
  // ranks cross tens of thousands of links, so a flat count beats a map.
  std::vector<uint32_t> hops_through(2 * cluster.links().size(), 0);
  std::vector<size_t> used;
  for (const auto& [a, b] : transfers) {
    if (a == b) continue;
    costs.add(a, b, cluster);
    if (!std::isfinite(costs.latency)) return costs;  // some hop has no route
    for (const RouteHop& hop : cluster.route(a, b)) {
      const size_t direction = 2 * hop.link + (hop.a_to_b ? 1 : 0);
      if (hops_through[direction]++ == 0) used.push_back(direction);
    }
  }
  for (size_t direction : used) {
    costs.bandwidth = std::min(costs.bandwidth, cluster.links()[direction / 2].spec.bandwidth_bytes_per_second /
                                                    static_cast<double>(hops_through[direction]));
  }
  return costs;
}

/// The slowest hop of rings that run at once (one ring, or the rails of a hierarchical phase),
/// each sending to its next member (concurrent_pair_costs): machines with fewer NICs than local
/// ranks carry several rails through one NIC, as NCCL's channels then do.
PairCosts concurrent_ring_costs(const std::vector<std::vector<DeviceId>>& rings, const Cluster& cluster) {
  std::vector<std::pair<DeviceId, DeviceId>> hops;
  for (const auto& ring : rings) {
    for (size_t i = 0; i < ring.size(); ++i) hops.emplace_back(ring[i], ring[(i + 1) % ring.size()]);
  }
  PairCosts costs = concurrent_pair_costs(hops, cluster);
  if (!std::isfinite(costs.latency) || rings.empty()) return costs;
  // A round waits on the hops a chunk travels (CollectiveStep::round_latency_seconds): their mean.
  double latency = 0;
  for (const auto& ring : rings) latency = std::max(latency, mean_hop_latency(ring, cluster));
  costs.latency = latency;
  return costs;
}

PairCosts ring_costs(const std::vector<DeviceId>& ring, const Cluster& cluster) {
  return concurrent_ring_costs({ring}, cluster);
}

/// Hierarchical rings: the slowest hop of the nodes' rings (local) and of the rails, the rings of
/// the nodes' devices of one ring position (global), each phase's rings running at once, over
/// every channel (hierarchical_channels); g devices per node, m nodes, `channels` rings per node.
struct TwoLevelCosts {
  PairCosts local, global;
  double g = 0, m = 0, channels = 1;
};

TwoLevelCosts two_level_costs(const std::vector<std::vector<std::vector<DeviceId>>>& channels, const Cluster& cluster) {
  TwoLevelCosts costs;
  const auto& nodes = channels.front();
  costs.g = static_cast<double>(nodes.front().size());
  costs.m = static_cast<double>(nodes.size());
  costs.channels = static_cast<double>(channels.size());
  std::vector<std::vector<DeviceId>> local, rails;
  for (const auto& channel : channels) {
    local.insert(local.end(), channel.begin(), channel.end());  // every node's rings at once, then the rails
    for (size_t r = 0; r < channel.front().size(); ++r) {
      rails.emplace_back();
      for (const auto& node : channel) rails.back().push_back(node[r]);
    }
  }
  costs.local = concurrent_ring_costs(local, cluster);
  costs.global = concurrent_ring_costs(rails, cluster);
  return costs;
}

/// `passes` ring passes of members - 1 rounds of `chunk` over hops no worse than `c`, plus the
/// adds of one reducing pass (`add_seconds` per round): passes (members-1)(a + chunk/B) + (members-1) r.
double ring_passes(const PairCosts& c, double members, double chunk, double passes, double add_seconds) {
  if (members <= 1) return 0;
  return passes * (members - 1) * (c.latency + chunk / c.bandwidth) + (members - 1) * add_seconds;
}

/// Seconds the slowest member of `group` takes to add `bytes` received (reduction_seconds).
double slowest_adds(const std::vector<DeviceId>& group, double bytes, const Cluster& cluster) {
  double slowest = 0;
  for (DeviceId d : group) slowest = std::max(slowest, reduction_seconds(bytes, cluster.device(d)));
  return slowest;
}


/// The latency of the slowest path a chunk travels through the trees, up (each member to its
/// parent, a leaf to the root) or down: the largest sum of route latencies from a member to its
/// tree's root. The per-phase schedule's first chunk waits on exactly these edges (tree_phase).
double deepest_path_latency(const std::array<ReductionTree, 2>& trees, bool up, const Cluster& cluster) {
  double deepest = 0;
  for (const ReductionTree& tree : trees) {
    std::map<DeviceId, double> to_root;
    // Leaves first, so backwards a member's edge up comes before the edges into it.
    for (auto edge = tree.edges.rbegin(); edge != tree.edges.rend(); ++edge) {
      const double hop = up ? cluster.route_latency_seconds(edge->child, edge->parent)
                            : cluster.route_latency_seconds(edge->parent, edge->child);
      const auto above = to_root.find(edge->parent);
      const double latency = (above == to_root.end() ? 0.0 : above->second) + hop;
      to_root[edge->child] = latency;
      deepest = std::max(deepest, latency);
    }
  }
  return deepest;
}

/// NCCL's two trees each moving half of `bytes` at once, as tree_phase lays them out, the reduce
/// and then the broadcast, each the pipeline's fill, L + D h / B, then the rest, a + (S/2 - h) / B,
/// where L is the latency of the deepest path a chunk travels that way (deepest_path_latency; D a
/// until 2026-12-08, every level at the slowest edge's), D the deeper tree's depth, h its first
/// chunk (tree_chunk_bytes), a the slowest edge's latency and B the narrowest link direction's
/// bandwidth over the transfers that cross it in that phase, both trees' edges at once
/// (concurrent_pair_costs); plus the adds of the member that receives the most
/// (reduction_seconds: children x S/2 over both trees; 0 on GPUs).
double tree_estimate_seconds(const std::array<ReductionTree, 2>& trees, double bytes, const Cluster& cluster) {
  std::vector<std::pair<DeviceId, DeviceId>> up, down;
  std::map<DeviceId, double> received;
  size_t depth = 0;
  for (const ReductionTree& tree : trees) {
    depth = std::max(depth, tree.depth);
    for (const TreeEdge& edge : tree.edges) {
      up.emplace_back(edge.child, edge.parent);
      down.emplace_back(edge.parent, edge.child);
      received[edge.parent] += bytes / 2;
    }
  }
  const double half = bytes / 2, head = tree_chunk_bytes(half, depth), rest = half - head;
  auto phase = [&](const PairCosts& c, double path_latency) {
    if (!std::isfinite(c.latency)) return c.latency;
    return path_latency + static_cast<double>(depth) * head / c.bandwidth +
           (rest > 0 ? c.latency + rest / c.bandwidth : 0.0);
  };
  double adds = 0;
  for (const auto& [member, in] : received) adds = std::max(adds, reduction_seconds(in, cluster.device(member)));
  return phase(concurrent_pair_costs(up, cluster), deepest_path_latency(trees, true, cluster)) +
         phase(concurrent_pair_costs(down, cluster), deepest_path_latency(trees, false, cluster)) + adds;
}

}  // namespace

std::vector<std::vector<DeviceId>> members_by_node(const std::vector<DeviceId>& group, const Cluster& cluster) {
  std::map<int, std::vector<DeviceId>> nodes;
  std::vector<int> order;
  for (DeviceId d : group) {
    int node = cluster.device(d).node;
    if (!nodes.count(node)) order.push_back(node);
    nodes[node].push_back(d);
  }
  std::vector<std::vector<DeviceId>> result;
  for (int node : order) result.push_back(std::move(nodes[node]));
  return result;
}

std::vector<DeviceId> topology_ring(const std::vector<DeviceId>& group, const Cluster& cluster) {
  if (group.size() < 3) return group;
  auto& memo = cluster.ring_memo();
  if (auto it = memo.find(group); it != memo.end()) return it->second;
  std::optional<std::vector<DeviceId>> ring = region_ring(group, cluster);
  if (!ring) ring = nearest_neighbour_ring(group, cluster);
  // Inside one machine NCCL searches for the ring whose slowest hop is fastest (bandwidth_ring.h):
  // kept where its narrowest link direction is wider than the walk's ring's (the same bandwidth at
  // a shorter metric leaves the collectives' times as they were).
  if (std::optional<std::vector<DeviceId>> searched = bandwidth_ring(group, *ring, cluster);
      searched && ring_costs(*searched, cluster).bandwidth > ring_costs(*ring, cluster).bandwidth * (1 + 1e-12)) {
    ring = std::move(searched);
  }
  return memo.emplace(group, std::move(*ring)).first->second;
}

bool is_ring(CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::kRing || algorithm == CollectiveAlgorithm::kRingInRankOrder;
}

std::vector<DeviceId> ring_of(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, const Cluster& cluster) {
  return algorithm == CollectiveAlgorithm::kRingInRankOrder ? group : topology_ring(group, cluster);
}

namespace {

/// NCCL's rings over GPUs of several machines, several on each (machine_channel_rings): the
/// machines in the order the topology ring `first` visits them (fabric locality), each machine's
/// members in its own topology ring. Empty where a member is not a GPU, a machine holds one member,
/// or the machines hold different numbers (one topology ring then).
std::vector<std::vector<DeviceId>> machine_rings(const std::vector<DeviceId>& group, const std::vector<DeviceId>& first,
                                                 const Cluster& cluster) {
  for (DeviceId d : group) {
    if (cluster.device(d).spec.kind != DeviceKind::kGpu) return {};
  }
  std::vector<std::vector<DeviceId>> machines = members_by_node(first, cluster);
  if (machines.size() < 2 || machines.size() == group.size()) return {};
  for (auto& members : machines) members = topology_ring(members, cluster);
  return machine_channel_rings(machines);
}

}  // namespace

std::vector<std::vector<DeviceId>> ring_channels_of(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                                    const Cluster& cluster) {
  if (algorithm == CollectiveAlgorithm::kRingInRankOrder || group.size() < 3) return {ring_of(algorithm, group, cluster)};
  auto& memo = cluster.channel_memo();
  if (auto it = memo.find(group); it != memo.end()) return it->second;
  const std::vector<DeviceId> first = topology_ring(group, cluster);
  std::vector<std::vector<DeviceId>> rings = machine_rings(group, first, cluster);
  if (rings.empty()) rings = channel_rings(group, first, ring_costs(first, cluster).bandwidth, cluster);
  return memo.emplace(group, std::move(rings)).first->second;
}

std::vector<std::vector<std::vector<DeviceId>>> hierarchical_channels(const std::vector<DeviceId>& group,
                                                                      const Cluster& cluster) {
  std::vector<std::vector<std::vector<DeviceId>>> node_rings;  // per node, its channels
  size_t channels = SIZE_MAX;
  for (const auto& members : members_by_node(group, cluster)) {
    node_rings.push_back(ring_channels_of(CollectiveAlgorithm::kRing, members, cluster));
    channels = std::min(channels, node_rings.back().size());
  }
  // As many channels as every node has; where they differ, one (each node's topology ring).
  for (const auto& rings : node_rings) {
    if (rings.size() != channels) channels = 1;
  }
  std::vector<std::vector<std::vector<DeviceId>>> result(channels);
  for (size_t c = 0; c < channels; ++c) {
    for (const auto& rings : node_rings) result[c].push_back(rings[c]);
  }
  return result;
}

bool applies_to_any_group(CollectiveAlgorithm algorithm) {
  return is_ring(algorithm) || algorithm == CollectiveAlgorithm::kDoubleBinaryTree;
}

bool applicable(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, const Cluster& cluster,
                std::string* why) {
  if (applies_to_any_group(algorithm)) return true;
  auto reject = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kRingInRankOrder:
    case CollectiveAlgorithm::kDoubleBinaryTree: return true;  // applies_to_any_group, above
    case CollectiveAlgorithm::kHalvingDoubling:
      if (!power_of_two(group.size())) {
        return reject("halving-doubling needs a power-of-two group, got " + std::to_string(group.size()) + " devices");
      }
      return true;
    case CollectiveAlgorithm::kHierarchical: {
      auto nodes = by_node(group, cluster);
      for (const auto& node : nodes) {
        if (node.size() != nodes.front().size()) {
          return reject("hierarchical all-reduce needs the same number of devices on every node");
        }
      }
      return true;
    }
    case CollectiveAlgorithm::kHostHalvingDoubling: {
      auto nodes = by_node(group, cluster);
      if (nodes.size() < 2 || !power_of_two(nodes.size())) {
        return reject("host halving-doubling needs a power-of-two number of machines, at least 2, got " +
                      std::to_string(nodes.size()));
      }
      for (const auto& node : nodes) {
        if (node.size() != nodes.front().size()) {
          return reject("host halving-doubling needs the same number of devices on every machine");
        }
        if (!node_host(node.front(), cluster)) {
          return reject("host halving-doubling stages through each machine's CPU, and the machine of " +
                        cluster.device(node.front()).name.canonical() + " has no CPU that device reaches");
        }
      }
      return true;
    }
    case CollectiveAlgorithm::kPairwise:
      for (DeviceId a : group) {
        for (DeviceId b : group) {
          if (a != b && !cluster.reachable(a, b)) {
            return reject("an all-to-all needs a route between every two devices of its group");
          }
        }
      }
      return true;
  }
  return false;
}

std::vector<CollectiveStep> allreduce_schedule(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                               double bytes, const Cluster& cluster, CollectiveFidelity fidelity) {
  std::string why;
  if (!applicable(algorithm, group, cluster, &why)) throw std::invalid_argument(why);
  ScheduleWriter writer(fidelity, cluster);
  const size_t n = group.size();
  if (n < 2) return {};
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kRingInRankOrder: {
      const auto rings = ring_channels_of(algorithm, group, cluster);
      const double chunk = bytes / static_cast<double>(n * rings.size());
      for (const auto& ring : rings) writer.ring_pass(ring, 2 * (n - 1), chunk, no_entry(n), n - 1);
      if (fidelity == CollectiveFidelity::kPerPhase && rings_across_machines(rings, cluster)) {
        return merge_parallel_hops(writer.take(), cluster);
      }
      break;
    }
    case CollectiveAlgorithm::kDoubleBinaryTree: {
      // Both trees in chunks of the deeper one's size (NCCL sizes them by its channels' depth).
      const auto trees = nccl_trees(group, cluster);
      const size_t depth = std::max(trees[0].depth, trees[1].depth);
      for (const ReductionTree& tree : trees) {
        if (fidelity == CollectiveFidelity::kPerPhase) {
          tree_phase(writer, tree, bytes / 2, tree_chunk_bytes(bytes / 2, depth));
        } else {
          tree_rounds(writer, tree, bytes / 2, tree_chunk_count(bytes / 2, depth));
        }
      }
      break;
    }
    case CollectiveAlgorithm::kHalvingDoubling: halving_doubling_schedule(writer, group, bytes, no_entry(n)); break;
    case CollectiveAlgorithm::kHierarchical: {
      const auto channels = hierarchical_channels(group, cluster);
      for (const auto& nodes : channels) hierarchical_schedule(writer, nodes, bytes / static_cast<double>(channels.size()));
      break;
    }
    case CollectiveAlgorithm::kHostHalvingDoubling: {
      const auto nodes = by_node(group, cluster);
      host_halving_doubling_schedule(writer, nodes, node_hosts(nodes, cluster), bytes);
      break;
    }
    case CollectiveAlgorithm::kPairwise: throw std::invalid_argument("pairwise runs all-to-alls, not all-reduces");
  }
  return writer.take();
}

bool collective_supported(CollectiveKind kind, CollectiveAlgorithm algorithm, std::string* why) {
  if (kind == CollectiveKind::kAllToAll && algorithm != CollectiveAlgorithm::kPairwise) {
    if (why) *why = "an all-to-all runs as pairwise exchanges (\"algorithm\": \"pairwise\"), not " + to_string(algorithm);
    return false;
  }
  if (algorithm == CollectiveAlgorithm::kPairwise) {
    if (kind == CollectiveKind::kAllToAll) return true;
    if (why) *why = "pairwise runs all-to-alls, not " + to_string(kind);
    return false;
  }
  if (kind == CollectiveKind::kAllReduce) return true;
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter) {
    if (why) *why = "collective tasks run all_reduce, all_gather, reduce_scatter or alltoall, not " + to_string(kind);
    return false;
  }
  if (!is_ring(algorithm) && algorithm != CollectiveAlgorithm::kHierarchical) {
    if (why) *why = to_string(kind) + " runs as a ring or hierarchical rings (as NCCL runs it), not " + to_string(algorithm);
    return false;
  }
  return true;
}

std::vector<CollectiveStep> collective_schedule(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                const std::vector<DeviceId>& group, double bytes,
                                                const Cluster& cluster, CollectiveFidelity fidelity) {
  if (kind == CollectiveKind::kAllReduce) return allreduce_schedule(algorithm, group, bytes, cluster, fidelity);
  std::string why;
  if (!collective_supported(kind, algorithm, &why) || !applicable(algorithm, group, cluster, &why)) {
    throw std::invalid_argument(why);
  }
  const size_t n = group.size();
  if (n < 2) return {};
  ScheduleWriter writer(fidelity, cluster);
  if (kind == CollectiveKind::kAllToAll) {
    // Every device sends its 1/n of the buffer to each other device, all at once (NCCL groups
    // the sends and receives); the network shares the links between them.
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i != j) writer.add(group[i], group[j], bytes / static_cast<double>(n), {});
      }
    }
    return writer.take();
  }
  if (algorithm == CollectiveAlgorithm::kHierarchical) {
    const auto channels = hierarchical_channels(group, cluster);
    const double share = bytes / static_cast<double>(channels.size());
    for (const auto& nodes : channels) {
      if (kind == CollectiveKind::kReduceScatter) {
        hierarchical_reduce_scatter(writer, nodes, share);
      } else {
        hierarchical_all_gather(writer, nodes, share);
      }
    }
    return writer.take();
  }
  const auto rings = ring_channels_of(algorithm, group, cluster);
  const double chunk = bytes / static_cast<double>(n * rings.size());
  for (const auto& ring : rings) {
    writer.ring_pass(ring, n - 1, chunk, no_entry(n), kind == CollectiveKind::kReduceScatter ? n - 1 : 0);
  }
  if (fidelity == CollectiveFidelity::kPerPhase && rings_across_machines(rings, cluster)) {
    return merge_parallel_hops(writer.take(), cluster);
  }
  return writer.take();
}

double reduction_seconds(double bytes, const ClusterDevice& device) {
  if (device.spec.kind != DeviceKind::kCpu || !(bytes > 0)) return 0;
  return 3 * bytes / (device.spec.memory_bandwidth_bytes_per_second * device.spec.memory_efficiency) /
         device.speed_factor;
}

double allreduce_estimate_seconds(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, double bytes,
                                  const Cluster& cluster) {
  const double n = static_cast<double>(group.size());
  if (group.size() < 2) return 0;
  auto adds = [&](double x) { return slowest_adds(group, x, cluster); };
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kRingInRankOrder: {
      const auto rings = ring_channels_of(algorithm, group, cluster);
      const PairCosts c = concurrent_ring_costs(rings, cluster);
      const double channels = static_cast<double>(rings.size());
      return 2 * (n - 1) * c.latency + 2 * (n - 1) / n * bytes / (channels * c.bandwidth) + (n - 1) * adds(bytes / n);
    }
    case CollectiveAlgorithm::kDoubleBinaryTree: return tree_estimate_seconds(nccl_trees(group, cluster), bytes, cluster);
    case CollectiveAlgorithm::kHalvingDoubling: {
      PairCosts c;
      for (size_t d = 1; d < group.size(); d <<= 1) {
        for (size_t i = 0; i < group.size(); ++i) c.add(group[i], group[i ^ d], cluster);
      }
      return 2 * std::log2(n) * c.latency + 2 * (n - 1) / n * bytes / c.bandwidth + adds((n - 1) / n * bytes);
    }
    case CollectiveAlgorithm::kHierarchical: {
      const TwoLevelCosts c = two_level_costs(hierarchical_channels(group, cluster), cluster);
      const double shard = bytes / (c.g * c.channels);
      return ring_passes(c.local, c.g, shard, 2, adds(shard)) + ring_passes(c.global, c.m, shard / c.m, 2, adds(shard / c.m));
    }
    case CollectiveAlgorithm::kHostHalvingDoubling: {
      const auto nodes = by_node(group, cluster);
      const std::vector<DeviceId> hosts = node_hosts(nodes, cluster);
      const double g = static_cast<double>(nodes.front().size()), m = static_cast<double>(nodes.size());
      const double shard = bytes / g;
      PairCosts root, staging, across;
      for (size_t k = 0; k < nodes.size(); ++k) {
        for (size_t r = 1; r < nodes[k].size(); ++r) {
          root.add(nodes[k][r], nodes[k][0], cluster);
          root.add(nodes[k][0], nodes[k][r], cluster);
        }
        staging.add(nodes[k][0], hosts[k], cluster);
        staging.add(hosts[k], nodes[k][0], cluster);
      }
      for (size_t d = 1; d < hosts.size(); d <<= 1) {
        for (size_t i = 0; i < hosts.size(); ++i) across.add(hosts[i], hosts[i ^ d], cluster);
      }
      const double inside = ring_passes(concurrent_ring_costs(nodes, cluster), g, shard, 2, adds(shard)) +
                            (g > 1 ? 2 * (root.latency + shard / root.bandwidth) : 0.0);
      const double copies = 2 * (staging.latency + bytes / staging.bandwidth);
      const double between = 2 * std::log2(m) * across.latency + 2 * (m - 1) / m * bytes / across.bandwidth +
                             slowest_adds(hosts, (m - 1) / m * bytes, cluster);
      return inside + copies + between;
    }
    case CollectiveAlgorithm::kPairwise: throw std::invalid_argument("pairwise runs all-to-alls, not all-reduces");
  }
  return 0;
}

double collective_estimate_seconds(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                   const std::vector<DeviceId>& group, double bytes, const Cluster& cluster) {
  if (kind == CollectiveKind::kAllReduce) return allreduce_estimate_seconds(algorithm, group, bytes, cluster);
  std::string why;
  if (!collective_supported(kind, algorithm, &why)) throw std::invalid_argument(why);
  if (group.size() < 2) return 0;
  if (kind == CollectiveKind::kAllToAll) {
    // Every pair's flow at once: the slowest pair's latency plus the time the most loaded link
    // direction takes for every flow routed through it (the bound max-min sharing meets when one
    // link is the bottleneck). Devices behind one switch port each: (n - 1)/n x bytes / B, an
    // all-gather's bandwidth term; a full mesh of direct links: bytes / (n B).
    const double chunk = bytes / static_cast<double>(group.size());
    double latency = 0;
    std::map<std::pair<LinkId, bool>, double> load;
    for (DeviceId a : group) {
      for (DeviceId b : group) {
        if (a == b) continue;
        if (!cluster.reachable(a, b)) return std::numeric_limits<double>::infinity();
        latency = std::max(latency, cluster.route_latency_seconds(a, b));
        for (const RouteHop& hop : cluster.route(a, b)) load[{hop.link, hop.a_to_b}] += chunk;
      }
    }
    double busiest = 0;
    for (const auto& [link, carried] : load) {
      busiest = std::max(busiest, carried / cluster.links()[link.first].spec.bandwidth_bytes_per_second);
    }
    return latency + busiest;
  }
  // One pass of the all-reduce's rings (its first half or its second), the reduce-scatter's adding.
  auto adds = [&](double x) { return kind == CollectiveKind::kReduceScatter ? slowest_adds(group, x, cluster) : 0.0; };
  if (algorithm == CollectiveAlgorithm::kHierarchical) {
    const TwoLevelCosts c = two_level_costs(hierarchical_channels(group, cluster), cluster);
    const double shard = bytes / (c.g * c.channels);
    return ring_passes(c.local, c.g, shard, 1, adds(shard)) + ring_passes(c.global, c.m, shard / c.m, 1, adds(shard / c.m));
  }
  const double n = static_cast<double>(group.size());
  const auto rings = ring_channels_of(algorithm, group, cluster);
  const double channels = static_cast<double>(rings.size());
  return ring_passes(concurrent_ring_costs(rings, cluster), n, bytes / (n * channels), 1, adds(bytes / n));
}

namespace {

/// The candidate with the lowest estimate of a collective of `kind` among those that apply to
/// the group (hierarchical only across machines; an algorithm some pair of which has no route
/// is skipped); `reason` lists the estimates.
CollectiveAlgorithm fastest(CollectiveKind kind, std::initializer_list<CollectiveAlgorithm> candidates,
                            const std::vector<DeviceId>& group, double bytes, const Cluster& cluster,
                            std::string* reason, bool nccl = false) {
  CollectiveAlgorithm best = CollectiveAlgorithm::kRing;
  double best_seconds = std::numeric_limits<double>::infinity();
  std::string text;
  for (CollectiveAlgorithm algorithm : candidates) {
    if (!applicable(algorithm, group, cluster, nullptr)) continue;
    if (algorithm == CollectiveAlgorithm::kHierarchical && members_by_node(group, cluster).size() < 2) continue;
    // NCCL's choice by its own latencies (nccl_cost_model.h) where its model covers the group.
    const std::optional<NcclCollectiveTime> by_nccl =
        nccl ? nccl_collective_time(kind, algorithm, group, bytes, cluster, 1.0, NcclTimes::kTunerBelieves)
             : std::nullopt;
    const double seconds = by_nccl ? by_nccl->seconds : collective_estimate_seconds(kind, algorithm, group, bytes, cluster);
    if (!std::isfinite(seconds)) continue;  // some pair it needs has no route
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "%s%s %.3g s", text.empty() ? "" : ", ", to_string(algorithm).c_str(), seconds);
    text += buffer;
    if (seconds < best_seconds) {
      best_seconds = seconds;
      best = algorithm;
    }
  }
  if (reason) *reason = (nccl ? "NCCL's tuner's times: " : "estimates: ") + text;
  return best;
}

}  // namespace

CollectiveAlgorithm choose_collective_algorithm(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes,
                                                const Cluster& cluster, std::string* reason) {
  if (kind == CollectiveKind::kAllReduce) return choose_allreduce(group, bytes, cluster, reason);
  if (kind == CollectiveKind::kAllToAll) {
    if (reason) *reason = "an all-to-all runs as pairwise exchanges";
    return CollectiveAlgorithm::kPairwise;
  }
  return fastest(kind, {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kHierarchical}, group, bytes, cluster, reason);
}

CollectiveAlgorithm choose_nccl_algorithm(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes,
                                          const Cluster& cluster, std::string* reason, NcclVersion version) {
  if (kind == CollectiveKind::kAllToAll) return choose_collective_algorithm(kind, group, bytes, cluster, reason);
  if (!version.searches_rings()) {
    if (reason) *reason = "NCCL " + to_string(version) + " runs one ring in rank order";
    return CollectiveAlgorithm::kRingInRankOrder;
  }
  // NCCL's ring: `ring`, across machines of several GPUs each its rings through every GPU
  // (machine_channel_rings; until 2026-12-08 placesim's `hierarchical` there).
  const CollectiveAlgorithm ring = CollectiveAlgorithm::kRing;
  if (kind != CollectiveKind::kAllReduce || !version.has_trees()) {
    // One candidate: timed only for the plan's note.
    return reason ? fastest(kind, {ring}, group, bytes, cluster, reason, true) : ring;
  }
  return fastest(kind, {ring, CollectiveAlgorithm::kDoubleBinaryTree}, group, bytes, cluster, reason, true);
}

CollectiveAlgorithm choose_allreduce(const std::vector<DeviceId>& group, double bytes, const Cluster& cluster,
                                     std::string* reason) {
  return fastest(CollectiveKind::kAllReduce,
                 {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kDoubleBinaryTree,
                  CollectiveAlgorithm::kHalvingDoubling, CollectiveAlgorithm::kHierarchical},
                 group, bytes, cluster, reason);
}

}  // namespace placesim
