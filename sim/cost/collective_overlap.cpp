#include "sim/cost/collective_overlap.h"

#include <algorithm>

namespace placesim {

CollectiveOverlap::CollectiveOverlap(const ExecutionPlan& plan, const Cluster& cluster)
    : plan_(plan), cluster_(cluster) {}

void CollectiveOverlap::count(const Task& collective, int delta) {
  if (collective.transport < 0) return;
  const double share = plan_.transports.at(static_cast<size_t>(collective.transport)).gpu_compute_share;
  if (share <= 0) return;
  if (share_.empty()) {
    share_.assign(cluster_.devices().size(), 0.0);
    in_flight_.assign(cluster_.devices().size(), 0);
  }
  for (DeviceId device : collective.group) {
    if (cluster_.device(device).name.kind != DeviceKind::kGpu) continue;
    in_flight_[device] += delta;
    share_[device] = in_flight_[device] > 0 ? std::max(share_[device], share) : 0;
  }
}

}  // namespace placesim
