#include "sim/placement/placement_log.h"

#include <cstdio>
#include <map>
#include <set>

namespace placesim {

std::string pci_bus_id_of(const std::string& bus_id, int offset) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  char tail = 0;
  if (std::sscanf(bus_id.c_str(), "%4x:%2x:%2x.%1x%c", &domain, &bus, &device, &function, &tail) != 4 ||
      bus_id.size() != 12 || bus + static_cast<unsigned>(offset) > 0xff) {
    return bus_id;
  }
  char text[16];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain, bus + static_cast<unsigned>(offset), device, function);
  return text;
}

std::string device_mapping(const Cluster& cluster) {
  std::string text = "Device mapping:\n";
  std::map<int, int> ordinal_per_node;                 // CUDA device ordinal within each machine
  std::map<int, std::set<std::string>> used_per_node;  // bus ids printed for each machine
  for (const auto& device : cluster.devices()) {
    if (device.spec.kind == DeviceKind::kCpu) continue;
    int ordinal = ordinal_per_node[device.node]++;
    text += device.name.canonical() + " -> device: " + std::to_string(ordinal) + ", name: " + device.spec.name;
    if (!device.spec.pci_bus_id.empty()) {
      // A profile gives one id for every GPU of its kind; a machine's GPUs each have their own.
      std::set<std::string>& used = used_per_node[device.node];
      std::string bus_id = device.spec.pci_bus_id;
      for (int offset = 1; used.count(bus_id) && offset < 256; ++offset) bus_id = pci_bus_id_of(device.spec.pci_bus_id, offset);
      used.insert(bus_id);
      text += ", pci bus id: " + bus_id;
    }
    if (!device.spec.compute_capability.empty()) text += ", compute capability: " + device.spec.compute_capability;
    text += "\n";
  }
  return text;
}

std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  std::string text = device_mapping(cluster);
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    text += op.name + ": (" + op.type + "): " + cluster.device(placement.device_of_op[id]).name.canonical() + "\n";
  }
  return text;
}

}  // namespace placesim
