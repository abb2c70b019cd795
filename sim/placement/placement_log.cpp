#include "sim/placement/placement_log.h"

#include <cstdio>
#include <map>
#include <set>
#include <unordered_set>

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

namespace {

std::string device_text(const DeviceName& name, TensorFlowVersion version) {
  return version.legacy_device_names() ? name.legacy() : name.canonical();
}

// GraphConstructor::Convert: the order in which the GraphDef's nodes (here, op ids) become graph
// nodes, i.e. their node ids. InitFromEdges counts every input, data or control, and lists each
// node's consumers in GraphDef order; a node is ready once all its inputs are converted.
std::vector<OpId> node_id_order(const OpGraph& graph, NodeIdOrder order) {
  const OpId ops = graph.size();
  std::vector<size_t> pending(ops);
  std::vector<std::vector<OpId>> consumers(ops);
  for (OpId id = 0; id < ops; ++id) {
    const auto inputs = graph.inputs(id);
    pending[id] = inputs.size();
    for (const auto& input : inputs) consumers[input.op].push_back(id);
  }
  std::vector<OpId> stack;  // TF <= 1.11: std::vector<int> ready_, taken from the back
  std::set<OpId> sorted;    // TF >= 1.12: std::set<int> ready_, smallest index first
  auto make_ready = [&](OpId id) {
    if (order == NodeIdOrder::kReadyStack) {
      stack.push_back(id);
    } else {
      sorted.insert(id);
    }
  };
  for (OpId id = 0; id < ops; ++id) {
    if (pending[id] == 0) make_ready(id);
  }
  std::vector<OpId> ids;
  while (!stack.empty() || !sorted.empty()) {
    OpId next = 0;
    if (order == NodeIdOrder::kReadyStack) {
      next = stack.back();
      stack.pop_back();
    } else {
      next = *sorted.begin();
      sorted.erase(sorted.begin());
    }
    ids.push_back(next);
    for (OpId consumer : consumers[next]) {
      if (--pending[consumer] == 0) make_ready(consumer);
    }
  }
  // A cycle leaves ops unconverted (TensorFlow refuses such a GraphDef); log them in graph order.
  for (OpId id = 0; id < ops; ++id) {
    if (pending[id] != 0) ids.push_back(id);
  }
  return ids;
}

}  // namespace

bool is_generator(const OpGraph& graph, OpId id) {
  static const std::unordered_set<std::string> kReferenceOutputs = {"VariableV2", "Variable", "TemporaryVariable"};
  const Op& op = graph.op(id);
  if (op.type == "NoOp" || op.kind == OpKind::kNoOp || kReferenceOutputs.count(op.type)) return false;
  for (const auto& input : graph.inputs(id)) {
    if (!input.edge.control) return false;
  }
  return true;
}

std::vector<OpId> placer_log_order(const OpGraph& graph, NodeIdOrder order) {
  std::vector<OpId> first_pass, second_pass;
  for (OpId id : node_id_order(graph, order)) (is_generator(graph, id) ? second_pass : first_pass).push_back(id);
  first_pass.insert(first_pass.end(), second_pass.begin(), second_pass.end());
  return first_pass;
}

ReplicatedGraph replicate_for_log(const OpGraph& graph, const std::vector<DeviceId>& replicas,
                                  const std::vector<std::pair<OpId, DeviceId>>& shared_device) {
  constexpr OpId kUnset = static_cast<OpId>(-1);
  ReplicatedGraph replicated{OpGraph(graph.name()), {}};
  // The inputs of `id` in their original order (every tower then follows the same placer rule),
  // from the copies `copy` names.
  auto copy_inputs = [&](OpId id, const std::vector<OpId>& copy) {
    for (const auto& input : graph.inputs(id)) {
      if (copy[input.op] == kUnset) continue;
      if (input.edge.control) {
        replicated.graph.add_control_edge(copy[input.op], copy[id]);
      } else {
        replicated.graph.add_edge(copy[input.op], copy[id], input.edge.bytes);
      }
    }
  };
  std::vector<OpId> shared(graph.size(), kUnset);  // op of `graph` -> its one copy
  for (const auto& [id, device] : shared_device) {
    shared[id] = replicated.graph.add_op(graph.op(id));
    replicated.placement.device_of_op.push_back(device);
  }
  for (const auto& [id, device] : shared_device) copy_inputs(id, shared);
  for (size_t r = 0; r < replicas.size(); ++r) {
    const std::string prefix = "tower_" + std::to_string(r) + "/";
    std::vector<OpId> copy = shared;
    for (OpId id = 0; id < graph.size(); ++id) {
      if (shared[id] != kUnset) continue;
      Op op = graph.op(id);
      op.name = prefix + op.name;
      if (!op.colocate_with.empty() && shared[graph.find(op.colocate_with)] == kUnset) op.colocate_with = prefix + op.colocate_with;
      copy[id] = replicated.graph.add_op(std::move(op));
      replicated.placement.device_of_op.push_back(replicas[r]);
    }
    for (OpId id = 0; id < graph.size(); ++id) {
      if (shared[id] == kUnset) copy_inputs(id, copy);
    }
  }
  return replicated;
}

std::string device_mapping(const Cluster& cluster, TensorFlowVersion version) {
  std::string text = "Device mapping:\n";
  std::map<int, int> ordinal_per_node;                 // CUDA device ordinal within each machine
  std::map<int, std::set<std::string>> used_per_node;  // bus ids printed for each machine
  for (const auto& device : cluster.devices()) {
    if (device.spec.kind == DeviceKind::kCpu) continue;
    int ordinal = ordinal_per_node[device.node]++;
    text += device_text(device.name, version) + " -> device: " + std::to_string(ordinal) + ", name: " + device.spec.name;
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

std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                          TensorFlowVersion version) {
  std::string text = device_mapping(cluster, version);
  for (OpId id : placer_log_order(graph, version.node_id_order())) {
    const Op& op = graph.op(id);
    text += op.name + ": (" + op.type + "): " + device_text(cluster.device(placement.device_of_op[id]).name, version) + "\n";
  }
  return text;
}

}  // namespace placesim
