// PlanSymmetry: a plan that simulates one representative of each set of devices whose timelines
// are identical (the tensor ranks and data replicas of a symmetric 3D-parallel step), and how the
// engine keeps the network exact without the mirrors' flows (docs/performance.md#symmetry).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

struct PlanSymmetry {
  /// Per device: the device whose timeline it repeats; itself for the devices simulated. Empty
  /// when the plan simulates every device.
  std::vector<DeviceId> representative_of;
  /// The network the simulated flows see (the quotient of the cluster's by the symmetry): each
  /// link direction (index 2 x link + (a_to_b ? 0 : 1)) belongs to an orbit, the set of link
  /// directions that mirror each other; the engine makes one SimGrid link per orbit, so that a
  /// simulated flow meets, as one flow, every flow whose mirror would meet it.
  std::vector<size_t> direction_orbit;
  /// Per orbit: the bandwidth of its one link, bytes/s: a member's bandwidth over the concurrent
  /// copies of a simulated flow on each member (its mirrors crossing the orbit / the orbit's
  /// size); for an orbit of links of different bandwidths that NCCL's channels fill alike (a
  /// DGX-1 V100's doubled NVLinks carrying two rings each way, its single ones one), the rate each
  /// crossing gets there times the simulated flows that cross it (they share the one link).
  std::vector<double> orbit_bandwidth_bytes_per_second;
  /// Orbits where flows of different multiplicities meet: the largest of them divides the bandwidth,
  /// and the result is approximate there (0 = exact under the symmetry).
  size_t approximate_links = 0;

  bool active() const { return !representative_of.empty(); }
  bool is_representative(DeviceId device) const { return !active() || representative_of[device] == device; }
};

/// A flow the plan simulates and every flow of the full plan that mirrors it (itself included),
/// each as a (from, to) device pair.
struct MirroredFlow {
  DeviceId from = 0;
  DeviceId to = 0;
  std::vector<std::pair<DeviceId, DeviceId>> images;
};

/// Fills `symmetry`'s orbits and divisors from the simulated flows and their images: hop i of
/// an image's route mirrors hop i of the flow's. Throws std::invalid_argument when an image's
/// route has another number of hops, or an orbit joins links of different bandwidth or latency.
void compute_link_orbits(const std::vector<MirroredFlow>& flows, const Cluster& cluster, PlanSymmetry* symmetry);

/// Index of a link direction in PlanSymmetry::direction_orbit.
inline size_t link_direction(const RouteHop& hop) { return 2 * hop.link + (hop.a_to_b ? 0 : 1); }

}  // namespace placesim
