// m-SCT (Baechi, Jeon et al. 2020, section 4.3), after Hanen and Munier's Small Communication
// Time scheduling: each op has at most one "favourite child" and each op at most one "favourite
// parent"; a favourite child runs on its favourite parent's device (no transfer on that edge),
// other ops are list-scheduled as in m-ETF, all under the memory ledger.
//
// Difference from the paper (docs/placement.md): Baechi picks the favourite pairs by solving the
// LP relaxation of Hanen and Munier's integer program (x_uv = 0 makes v u's favourite child,
// constraints: start_v >= start_u + p_u + c_uv x_uv, sum over u's children of x_uv >= children-1,
// sum over v's parents of x_uv >= parents-1; minimise the makespan) and rounding x_uv < 1/2 to
// favourite. We pick them greedily instead: data edges in decreasing communication volume (the
// forward tensor plus its gradient when training), an edge becoming a favourite pair when its
// parent has no favourite child yet and its child no favourite parent (a greedy maximum-weight
// matching of the same degree constraints, ignoring the start-time constraints). Nor do we keep
// a device idle for a favourite child that is not ready yet. And since Hanen and Munier's
// processors are identical, on a mixed cluster a favourite child follows its parent only to a
// device where it computes as fast as on any device it may use (a GPU's child is not dragged
// onto a CPU).
#include <algorithm>
#include <tuple>

#include "sim/auto_placement/auto_placer.h"
#include "sim/auto_placement/list_scheduler.h"

namespace placesim {

std::vector<std::optional<OpId>> favourite_parents(const PlacementProblem& problem) {
  const OpGraph& graph = *problem.graph;
  const size_t n = graph.size();
  // (volume, parent position, child position) sorted by decreasing volume, then graph order.
  std::vector<std::tuple<double, size_t, size_t>> edges;
  for (OpId u = 0; u < n; ++u) {
    for (const auto& output : graph.outputs(u)) {
      if (output.edge.control) continue;
      double volume = graph.op(u).output_bytes;
      if (problem.needs_gradient[u] && problem.needs_gradient[output.op]) volume += output.edge.bytes;
      if (volume > 0) edges.emplace_back(volume, problem.position[u], problem.position[output.op]);
    }
  }
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                            : std::tie(std::get<1>(a), std::get<2>(a)) < std::tie(std::get<1>(b), std::get<2>(b));
  });
  std::vector<bool> has_child(n, false);
  std::vector<std::optional<OpId>> parent(n);
  for (const auto& [volume, from, to] : edges) {
    OpId u = problem.order[from], v = problem.order[to];
    if (has_child[u] || parent[v]) continue;
    has_child[u] = true;
    parent[v] = u;
  }
  return parent;
}

AutoPlacement place_m_sct(const PlacementProblem& problem) {
  std::vector<std::optional<OpId>> parent = favourite_parents(problem);
  return list_schedule(problem, "m-SCT", [&](OpId v, const MemoryLedger& ledger) -> std::optional<DeviceId> {
    if (!parent[v]) return std::nullopt;
    DeviceId device = *ledger.device_of(*parent[v]);
    // Hanen and Munier's processors are identical; on a mixed cluster the favourite child
    // follows its parent only to a device where it computes as fast as anywhere it may run.
    for (DeviceId other : problem.devices) {
      if (problem.allowed(v, other) && problem.compute_seconds[v][other] < problem.compute_seconds[v][device]) {
        return std::nullopt;
      }
    }
    return device;
  });
}

}  // namespace placesim
