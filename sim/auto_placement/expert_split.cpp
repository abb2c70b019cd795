// The expert baseline: what a person splitting a model by hand across accelerators does — cut
// the ops, in topological order, into one contiguous run per accelerator with equal forward +
// backward FLOPs (the same rule as pipeline stages, docs/pipeline-parallel.md: an op goes to the
// run in which the midpoint of its FLOPs falls on the cumulative sum; ops without FLOPs join their
// first consumer). CPU-only groups go to the first CPU with room. An op whose run's device has no
// room moves to the next accelerator with room (then earlier ones, then the CPUs).
#include <algorithm>
#include <cmath>

#include "sim/auto_placement/auto_placer.h"
#include "sim/auto_placement/memory_ledger.h"

namespace placesim {

AutoPlacement place_expert(const PlacementProblem& problem) {
  const OpGraph& graph = *problem.graph;
  const size_t n = graph.size();
  std::vector<DeviceId> runs = problem.accelerators_or_cpus();
  const size_t k = runs.size();
  auto flops = [&](OpId v) {
    const Op& op = graph.op(v);
    return op.forward_flops + (problem.needs_gradient[v] ? op.backward_flops : 0);
  };
  double total = 0;
  for (OpId v : problem.order) total += flops(v);

  std::vector<std::optional<size_t>> run_of(n);
  double cumulative = 0;
  for (OpId v : problem.order) {
    if (flops(v) <= 0 || total <= 0) continue;
    double midpoint = cumulative + flops(v) / 2;
    cumulative += flops(v);
    run_of[v] = std::min(k - 1, static_cast<size_t>(std::floor(midpoint / total * static_cast<double>(k))));
  }
  for (auto it = problem.order.rbegin(); it != problem.order.rend(); ++it) {
    if (run_of[*it]) continue;
    for (const auto& output : graph.outputs(*it)) {
      if (run_of[output.op]) {
        run_of[*it] = run_of[output.op];
        break;
      }
    }
  }
  size_t previous = 0;
  for (OpId v : problem.order) {
    if (!run_of[v]) run_of[v] = previous;  // a sink without FLOPs stays with what precedes it
    previous = *run_of[v];
  }

  MemoryLedger ledger(problem);
  for (OpId v : problem.order) {
    std::vector<DeviceId> candidates;
    if (auto group = ledger.group_device(v)) {
      candidates = {*group};
    } else if (problem.cpu_only[problem.group_of[v]]) {
      candidates = problem.devices;
    } else {
      for (size_t r = *run_of[v]; r < k; ++r) candidates.push_back(runs[r]);
      for (size_t r = *run_of[v]; r-- > 0;) candidates.push_back(runs[r]);
      for (DeviceId d : problem.devices) {
        if (std::find(runs.begin(), runs.end(), d) == runs.end()) candidates.push_back(d);
      }
    }
    auto chosen = std::find_if(candidates.begin(), candidates.end(), [&](DeviceId d) { return ledger.fits(v, d); });
    if (chosen == candidates.end()) ledger.fail_no_room(v, "expert split");
    ledger.place(v, *chosen);
  }
  AutoPlacement result;
  for (OpId v = 0; v < n; ++v) result.placement.device_of_op.push_back(*ledger.device_of(v));
  result.reserved_bytes = ledger.used();
  return result;
}

}  // namespace placesim
