#include "sim/plan/nccl_trees.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "sim/plan/collective_schedule.h"

namespace placesim {
namespace {

/// Depth-first searches stop after this many extensions of a partial chain (a sparse machine
/// of 16 GPUs with no fast chain could otherwise try every order).
constexpr size_t kMaxChainExtensions = 200000;

/// The narrower way's route bandwidth between a and b; 0 where either way has no route.
double pair_bandwidth(DeviceId a, DeviceId b, const Cluster& cluster) {
  if (!cluster.reachable(a, b) || !cluster.reachable(b, a)) return 0;
  return std::min(cluster.route_bandwidth_bytes_per_second(a, b), cluster.route_bandwidth_bytes_per_second(b, a));
}

/// topology_ring's ring opened at its slowest hop: the member after that hop first.
std::vector<DeviceId> ring_cut_open(const std::vector<DeviceId>& members, const Cluster& cluster) {
  std::vector<DeviceId> ring = topology_ring(members, cluster);
  const size_t n = ring.size();
  size_t slowest = n - 1;  // the hop from ring[slowest] to ring[slowest + 1]
  double slowest_bandwidth = pair_bandwidth(ring[n - 1], ring[0], cluster);
  for (size_t i = 0; i + 1 < n; ++i) {
    const double bandwidth = pair_bandwidth(ring[i], ring[i + 1], cluster);
    if (bandwidth < slowest_bandwidth) {
      slowest_bandwidth = bandwidth;
      slowest = i;
    }
  }
  std::rotate(ring.begin(), ring.begin() + static_cast<std::ptrdiff_t>((slowest + 1) % n), ring.end());
  return ring;
}

/// A chain through every member (indices into `bandwidth`) whose consecutive pairs all have at
/// least `floor` bandwidth, from member 0 (else from each later one in turn); empty when none or
/// out of budget.
std::vector<size_t> chain_at(const std::vector<std::vector<double>>& bandwidth, double floor, size_t* budget,
                             bool* out_of_budget) {
  const size_t n = bandwidth.size();
  std::vector<size_t> path;
  std::vector<bool> used(n, false);
  std::function<bool()> extend = [&]() -> bool {
    if (path.size() == n) return true;
    for (size_t next = 0; next < n; ++next) {
      if (used[next] || bandwidth[path.back()][next] < floor) continue;
      if ((*budget)-- == 0) {
        *out_of_budget = true;
        return false;
      }
      used[next] = true;
      path.push_back(next);
      if (extend()) return true;
      path.pop_back();
      used[next] = false;
      if (*out_of_budget) return false;
    }
    return false;
  };
  for (size_t start = 0; start < n && !*out_of_budget; ++start) {
    path = {start};
    std::fill(used.begin(), used.end(), false);
    used[start] = true;
    if (extend()) return path;
  }
  return {};
}

/// Tree 0's parent position of each position 0..m-1 (the root, position 0, its own).
std::vector<size_t> binary_tree_parents(size_t m) {
  std::vector<size_t> parent(m, 0);
  if (m < 2) return parent;
  size_t top = 1;
  while (top * 2 < m) top *= 2;
  parent[top] = 0;
  // Each position p > 0 with t trailing zero bits: children p - 2^(t-1) and the first of
  // p + 2^(t-1), p + 2^(t-2), ... below m.
  std::function<void(size_t)> attach = [&](size_t p) {
    size_t low = p & (~p + 1);  // 2^t
    if (low < 2) return;
    size_t half = low / 2;
    parent[p - half] = p;
    attach(p - half);
    for (size_t step = half; step > 0; step /= 2) {
      if (p + step < m) {
        parent[p + step] = p;
        attach(p + step);
        break;
      }
    }
  };
  attach(top);
  return parent;
}

/// Edges leaves-first (deepest first) from children lists rooted at `root`, and the depth.
ReductionTree ordered_tree(DeviceId root, const std::map<DeviceId, std::vector<DeviceId>>& children) {
  ReductionTree tree;
  tree.root = root;
  std::vector<std::pair<TreeEdge, size_t>> by_level;  // edge, level of its child (1 = under the root)
  std::vector<std::pair<DeviceId, size_t>> frontier = {{root, 0}};
  for (size_t i = 0; i < frontier.size(); ++i) {
    const auto [node, level] = frontier[i];
    auto it = children.find(node);
    if (it == children.end()) continue;
    for (DeviceId child : it->second) {
      by_level.push_back({{child, node}, level + 1});
      frontier.push_back({child, level + 1});
    }
  }
  // Breadth-first order reversed: every edge after the edges below it.
  for (auto it = by_level.rbegin(); it != by_level.rend(); ++it) {
    tree.edges.push_back(it->first);
    tree.depth = std::max(tree.depth, it->second);
  }
  return tree;
}

}  // namespace

std::vector<DeviceId> node_chain(const std::vector<DeviceId>& members, const Cluster& cluster) {
  if (members.size() < 3) return members;
  auto& memo = cluster.chain_memo();
  if (auto it = memo.find(members); it != memo.end()) return it->second;
  std::vector<DeviceId> chain;
  if (members.size() <= kMaxChainSearchMembers) {
    const size_t n = members.size();
    std::vector<std::vector<double>> bandwidth(n, std::vector<double>(n, 0));
    std::vector<double> rates;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        bandwidth[i][j] = pair_bandwidth(members[i], members[j], cluster);
        if (bandwidth[i][j] > 0) rates.push_back(bandwidth[i][j]);
      }
    }
    std::sort(rates.rbegin(), rates.rend());
    rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
    size_t budget = kMaxChainExtensions;
    bool out_of_budget = false;
    for (double rate : rates) {
      const std::vector<size_t> found = chain_at(bandwidth, rate, &budget, &out_of_budget);
      if (out_of_budget) break;
      if (!found.empty()) {
        for (size_t index : found) chain.push_back(members[index]);
        break;
      }
    }
  }
  if (chain.empty()) chain = ring_cut_open(members, cluster);
  return memo.emplace(members, std::move(chain)).first->second;
}

std::array<ReductionTree, 2> nccl_trees(const std::vector<DeviceId>& group, const Cluster& cluster) {
  const std::vector<std::vector<DeviceId>> machines = members_by_node(group, cluster);
  std::map<DeviceId, std::vector<DeviceId>> inside;  // chain edges: parent -> its child
  std::vector<DeviceId> heads;
  for (const auto& members : machines) {
    const std::vector<DeviceId> chain = node_chain(members, cluster);
    heads.push_back(chain.front());
    for (size_t i = 1; i < chain.size(); ++i) inside[chain[i - 1]].push_back(chain[i]);
  }
  const size_t m = machines.size();
  const std::vector<size_t> parent_position = binary_tree_parents(m);
  std::array<ReductionTree, 2> trees;
  for (size_t t = 0; t < 2; ++t) {
    // Machine i's position in tree t, and the machine at each position.
    std::vector<size_t> machine_at(m);
    for (size_t i = 0; i < m; ++i) {
      const size_t position = t == 0 ? i : (m % 2 == 0 ? m - 1 - i : (i + 1) % m);
      machine_at[position] = i;
    }
    std::map<DeviceId, std::vector<DeviceId>> children = inside;
    for (size_t p = 1; p < m; ++p) children[heads[machine_at[parent_position[p]]]].push_back(heads[machine_at[p]]);
    trees[t] = ordered_tree(heads[machine_at[0]], children);
  }
  return trees;
}

double tree_chunk_bytes(double bytes_per_tree, size_t depth) {
  const double levels = static_cast<double>(std::max<size_t>(depth, 1));
  double chunk = 512.0 * 1024;
  while (bytes_per_tree / chunk < 8 * levels && chunk > 131072) chunk /= 2;
  while (bytes_per_tree / chunk < 4 * levels && chunk > 65536) chunk /= 2;
  while (bytes_per_tree / chunk < levels && chunk > 32768) chunk /= 2;
  return std::min(chunk, bytes_per_tree);
}

size_t tree_chunk_count(double bytes_per_tree, size_t depth) {
  if (!(bytes_per_tree > 0)) return 1;
  const double chunks = std::ceil(bytes_per_tree / tree_chunk_bytes(bytes_per_tree, depth) - 1e-9);
  return static_cast<size_t>(std::clamp(chunks, 1.0, static_cast<double>(kMaxTreeChunks)));
}

}  // namespace placesim
