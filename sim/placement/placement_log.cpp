#include "sim/placement/placement_log.h"

#include <map>

namespace placesim {

std::string device_mapping(const Cluster& cluster) {
  std::string text = "Device mapping:\n";
  std::map<int, int> ordinal_per_node;  // CUDA device ordinal within each machine
  for (const auto& device : cluster.devices()) {
    if (device.spec.kind == DeviceKind::kCpu) continue;
    int ordinal = ordinal_per_node[device.node]++;
    text += device.name.legacy() + " -> device: " + std::to_string(ordinal) + ", name: " + device.spec.name;
    if (!device.spec.pci_bus_id.empty()) text += ", pci bus id: " + device.spec.pci_bus_id;
    text += "\n";
  }
  return text;
}

std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  std::string text = device_mapping(cluster);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    text += op.name + ": (" + op.type + "): " + cluster.device(placement.device_of_op[id]).name.legacy() + "\n";
  }
  return text;
}

}  // namespace placesim
