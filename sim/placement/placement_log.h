// The placement log in TensorFlow 1.x's log_device_placement form:
//   Device mapping:
//   /job:localhost/replica:0/task:0/gpu:0 -> device: 0, name: GeForce GTX 850M, pci bus id: 0000:01:00.0
//   b: (VariableV2): /job:localhost/replica:0/task:0/cpu:0
#pragma once

#include <string>

#include "sim/placement/placement.h"

namespace placesim {

/// The "Device mapping:" block (accelerators only, as TensorFlow prints it).
std::string device_mapping(const Cluster& cluster);
/// The full log: device mapping, then one line per op in graph order.
std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement);

}  // namespace placesim
