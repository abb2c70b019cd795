// m-TOPO (Baechi, Jeon et al. 2020, section 4.1): ops in topological order fill one device after
// another, each device up to an even share of the graph's memory (so that every device gets some
// of the graph), never past its capacity. Accelerators take turns in cluster order; CPU-only
// groups go to the first CPU with room; when no accelerator from the current one onwards has
// room, the earlier ones and then the CPUs are tried.
#include <algorithm>

#include "sim/auto_placement/auto_placer.h"
#include "sim/auto_placement/memory_ledger.h"

namespace placesim {

AutoPlacement place_m_topo(const PlacementProblem& problem) {
  MemoryLedger ledger(problem);
  std::vector<DeviceId> turns = problem.accelerators_or_cpus();
  double total_bytes = 0;
  for (OpId v : problem.order) total_bytes += ledger.own_bytes(v);
  const double share_bytes = total_bytes / static_cast<double>(turns.size());

  size_t current = 0;
  for (OpId v : problem.order) {
    std::vector<DeviceId> candidates;
    if (auto group = ledger.group_device(v)) {
      candidates = {*group};
    } else if (problem.cpu_only[problem.group_of[v]]) {
      candidates = problem.devices;  // allowed() keeps the CPUs
    } else {
      while (current + 1 < turns.size() && ledger.used_bytes(turns[current]) >= share_bytes) ++current;
      for (size_t k = current; k < turns.size(); ++k) candidates.push_back(turns[k]);
      for (size_t k = 0; k < current; ++k) candidates.push_back(turns[k]);
      for (DeviceId d : problem.devices) {
        if (std::find(turns.begin(), turns.end(), d) == turns.end()) candidates.push_back(d);
      }
    }
    auto chosen = std::find_if(candidates.begin(), candidates.end(), [&](DeviceId d) { return ledger.fits(v, d); });
    if (chosen == candidates.end()) ledger.fail_no_room(v, "m-TOPO");
    ledger.place(v, *chosen);
    auto turn = std::find(turns.begin(), turns.end(), *chosen);
    if (turn != turns.end() && static_cast<size_t>(turn - turns.begin()) > current) current = turn - turns.begin();
  }
  AutoPlacement result;
  for (OpId v = 0; v < problem.graph->size(); ++v) result.placement.device_of_op.push_back(*ledger.device_of(v));
  result.reserved_bytes = ledger.used();
  return result;
}

}  // namespace placesim
