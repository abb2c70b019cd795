// CollectiveOverlap: while a collective whose transport takes a share of its GPUs' compute is in
// flight (NCCL's kernels run on the same SMs, Transport::gpu_compute_share), a compute task that
// starts on one of those GPUs takes 1 / (1 - share) as long. Both engines count their collectives
// in and out through it, so they charge the overlap alike.
#pragma once

#include <vector>

#include "sim/plan/execution_plan.h"

namespace placesim {

class CollectiveOverlap {
 public:
  CollectiveOverlap(const ExecutionPlan& plan, const Cluster& cluster);

  void start(const Task& collective) { count(collective, +1); }
  void end(const Task& collective) { count(collective, -1); }
  /// A compute task's time on `device` now: `seconds` stretched by the largest share in flight.
  double stretched(DeviceId device, double seconds) const {
    return !share_.empty() && share_[device] > 0 ? seconds / (1.0 - share_[device]) : seconds;
  }

 private:
  void count(const Task& collective, int delta);

  const ExecutionPlan& plan_;
  const Cluster& cluster_;
  /// Per device, sized at the first collective with a share (plans without one, and the closed
  /// form's many small parts of a plan, never pay for a cluster-sized table): the largest
  /// share in flight (0: none), and the collectives with a share running on it.
  std::vector<double> share_;
  std::vector<int> in_flight_;
};

}  // namespace placesim
