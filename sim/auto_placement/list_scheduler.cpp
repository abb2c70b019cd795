#include "sim/auto_placement/list_scheduler.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace placesim {

AutoPlacement list_schedule(const PlacementProblem& problem, const std::string& algorithm,
                            const PreferredDevice& preferred) {
  const OpGraph& graph = *problem.graph;
  const size_t n = graph.size();
  MemoryLedger ledger(problem);
  std::vector<double> finish(n, 0);
  std::vector<double> available(problem.cluster->devices().size(), 0);  // non-insertion: a device's last finish
  std::vector<size_t> waiting(n, 0);
  std::vector<OpId> ready;
  for (OpId v = 0; v < n; ++v) {
    waiting[v] = graph.inputs(v).size();
    if (waiting[v] == 0) ready.push_back(v);
  }

  auto earliest_start = [&](OpId v, DeviceId d) {
    double start = available[d];
    for (const auto& input : graph.inputs(v)) {
      DeviceId from = *ledger.device_of(input.op);
      double arrival = finish[input.op];
      if (!input.edge.control) arrival += problem.edge_seconds(input.op, v, input.edge.bytes, from, d);
      start = std::max(start, arrival);
    }
    return start;
  };

  AutoPlacement result;
  while (!ready.empty()) {
    // Best (start, -bottom level, topological position, device) over ready ops and devices with room.
    using Key = std::tuple<double, double, size_t, DeviceId>;
    std::optional<Key> best;
    for (OpId v : ready) {
      std::vector<DeviceId> candidates;
      if (auto group = ledger.group_device(v)) {
        candidates = {*group};
      } else if (auto wanted = preferred ? preferred(v, ledger) : std::nullopt; wanted && ledger.fits(v, *wanted)) {
        candidates = {*wanted};
      } else {
        candidates = problem.devices;
      }
      // The device where v finishes first (then starts first, then comes first).
      std::optional<std::tuple<double, double, DeviceId>> chosen;
      for (DeviceId d : candidates) {
        if (!ledger.fits(v, d)) continue;
        double start = earliest_start(v, d);
        std::tuple<double, double, DeviceId> option{start + problem.compute_seconds[v][d], start, d};
        if (!chosen || option < *chosen) chosen = option;
      }
      // Devices only fill up, so an op with no room now never gets any.
      if (!chosen) ledger.fail_no_room(v, algorithm);
      Key key{std::get<1>(*chosen), -problem.bottom_level_seconds[v], problem.position[v], std::get<2>(*chosen)};
      if (!best || key < *best) best = key;
    }
    auto [start, level, position, device] = *best;
    OpId v = problem.order[position];
    ledger.place(v, device);
    finish[v] = start + problem.compute_seconds[v][device];
    available[device] = finish[v];
    result.estimated_seconds = std::max(result.estimated_seconds, finish[v]);
    ready.erase(std::find(ready.begin(), ready.end(), v));
    for (const auto& output : graph.outputs(v)) {
      if (--waiting[output.op] == 0) ready.push_back(output.op);
    }
  }
  result.placement.device_of_op.resize(n);
  for (OpId v = 0; v < n; ++v) result.placement.device_of_op[v] = *ledger.device_of(v);
  result.reserved_bytes = ledger.used();
  return result;
}

}  // namespace placesim
