// MemoryLedger: the memory model the automatic placers fill devices against. Placing op v on
// device d charges d, for one step, what the execution plan will allocate there for v (sim/plan):
// its static memory (parameters, gradients, optimizer state: sim/plan/memory_model), its forward
// output, its backward output (gradients w.r.t. its inputs), the growth of d's GEMM/convolution
// workspace, a received copy of each input produced on another device, and room for the gradient
// of each of its outputs, which comes back from a consumer on another device; that room is given
// back when the consumer lands on d. The sum over one step of every buffer the plan allocates
// bounds the simulated peak (buffers are freed within the step, not all at once).
// When a colocation group's first op is placed, the others' worst case is reserved on its device
// so that they always fit when their turn comes.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/auto_placement/placement_problem.h"

namespace placesim {

class MemoryLedger {
 public:
  explicit MemoryLedger(const PlacementProblem& problem);

  /// Would placing `v` on `d` (its producers already placed) keep every device within capacity?
  bool fits(OpId v, DeviceId d) const;
  /// Records `v` on `d` (the caller checked fits()).
  void place(OpId v, DeviceId d);

  /// The device of `v`'s colocation group, once one member is placed.
  std::optional<DeviceId> group_device(OpId v) const { return group_device_[problem_.group_of[v]]; }
  std::optional<DeviceId> device_of(OpId v) const { return device_of_[v]; }
  double used_bytes(DeviceId d) const { return used_[d]; }
  const std::vector<double>& used() const { return used_; }

  /// What `v` needs on its own device wherever its inputs are (for messages and m-TOPO's shares):
  /// static memory + outputs + workspace + room for its outputs' gradients, without received copies.
  double own_bytes(OpId v) const;
  /// Throws the placer's SpecError: no allowed device has room for `v`.
  [[noreturn]] void fail_no_room(OpId v, const std::string& algorithm) const;

 private:
  /// Bytes placing `v` on `d` adds to d, given its producers' devices.
  double charge(OpId v, DeviceId d) const;
  /// Gradient bytes that come back to `v`'s device over its data outputs when training.
  double gradient_room_bytes(OpId v) const;
  /// Upper bound of `v`'s charges on its own device, whatever the devices of its inputs.
  double worst_case_bytes(OpId v) const;

  const PlacementProblem& problem_;
  std::vector<double> used_;       ///< by DeviceId, reservations included
  std::vector<double> workspace_;  ///< by DeviceId: the largest GEMM/conv output placed there
  std::vector<double> reserved_;   ///< by OpId: reserved for it, not yet charged
  std::vector<std::optional<DeviceId>> device_of_;
  std::vector<std::optional<DeviceId>> group_device_;  ///< by leader
  std::set<std::pair<OpId, DeviceId>> received_;       ///< (producer, device) copies charged
};

}  // namespace placesim
