// The placement log in TensorFlow 1.x's log_device_placement form, with the device names of
// TensorFlow 1.4 and later (`/device:GPU:0`), the names every other placesim output uses, so one
// output never mixes them with TensorFlow 1.3's `/gpu:0`:
//   Device mapping:
//   /job:localhost/replica:0/task:0/device:GPU:0 -> device: 0, name: GeForce GTX 850M, pci bus id: 0000:01:00.0, compute capability: 5.0
//   b: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0
#pragma once

#include <string>

#include "sim/placement/placement.h"

namespace placesim {

/// The "Device mapping:" block (accelerators only, as TensorFlow prints it). Each GPU of a machine
/// has its own PCI bus id: its cluster template's, else its profile's for the machine's first GPU
/// of that profile and, for the k-th, the profile's bus number + k (pci_bus_id_of).
std::string device_mapping(const Cluster& cluster);
/// The full log: device mapping, then one line per op in graph order.
std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement);

/// "0000:06:00.0" with `offset` added to its bus number ("0000:07:00.0" for 1); `bus_id` itself
/// when it is not of the DOMAIN:BUS:DEVICE.FUNCTION form or the bus would pass 0xff.
std::string pci_bus_id_of(const std::string& bus_id, int offset);

}  // namespace placesim
