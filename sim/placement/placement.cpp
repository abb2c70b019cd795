#include "sim/placement/placement.h"

#include <numeric>
#include <optional>

#include "sim/spec/spec_error.h"

namespace placesim {
namespace {

struct Request {
  std::string device;
  std::optional<size_t> rule;  ///< the strategy's rule that asked; none: the op's own device
  OpId op = 0;                 ///< the op that asked
};

std::string available_devices(const Cluster& cluster) {
  std::string text;
  for (const auto& device : cluster.devices()) text += (text.empty() ? "" : ", ") + device.name.canonical();
  return text;
}

std::optional<DeviceId> first_of_kind(const Cluster& cluster, DeviceKind kind, std::optional<int> node) {
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    const auto& device = cluster.device(id);
    if (device.name.kind == kind && (!node || device.node == *node)) return id;
  }
  return std::nullopt;
}

DeviceId default_device(const Cluster& cluster, bool cpu_only) {
  if (!cpu_only) {
    if (auto gpu = first_of_kind(cluster, DeviceKind::kGpu, 0)) return *gpu;
    if (auto gpu = first_of_kind(cluster, DeviceKind::kGpu, std::nullopt)) return *gpu;
  }
  if (auto cpu = first_of_kind(cluster, DeviceKind::kCpu, 0)) return *cpu;
  if (auto cpu = first_of_kind(cluster, DeviceKind::kCpu, std::nullopt)) return *cpu;
  return 0;
}

/// Union-find over colocation constraints.
class ColocationGroups {
 public:
  explicit ColocationGroups(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  size_t root(size_t v) {
    while (parent_[v] != v) v = parent_[v] = parent_[parent_[v]];
    return v;
  }
  void join(size_t a, size_t b) {
    a = root(a);
    b = root(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);  // the earliest op leads the group
  }

 private:
  std::vector<size_t> parent_;
};

}  // namespace

Placement place_ops(const OpGraph& graph, const Cluster& cluster, const PlacementOptions& options) {
  const size_t n = graph.size();
  std::vector<std::optional<Request>> requests(n);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    for (const auto& rule : options.rules) {
      if (glob_match(rule.ops, op.name)) {
        requests[id] = Request{rule.device, rule.index, id};
        break;
      }
    }
    if (!requests[id] && !op.requested_device.empty()) {
      requests[id] = Request{op.requested_device, std::nullopt, id};
    }
  }

  ColocationGroups groups(n);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (!op.colocate_with.empty()) groups.join(id, graph.find(op.colocate_with));
  }

  Placement placement;
  placement.device_of_op.assign(n, 0);
  auto fail = [&](const Request& request, const std::string& message) {
    if (request.rule) throw SpecError::strategy("placement/rules/" + std::to_string(*request.rule) + "/device", message);
    throw SpecError::op_device(request.op, message);
  };

  // Resolve each group once: the first explicit request (in op order) decides.
  std::vector<std::optional<DeviceId>> group_device(n);
  std::vector<bool> group_cpu_only(n, false);
  for (OpId id = 0; id < n; ++id) {
    if (graph.op(id).cpu_only) group_cpu_only[groups.root(id)] = true;
  }
  std::vector<std::optional<Request>> group_request(n);
  for (OpId id = 0; id < n; ++id) {
    if (!requests[id]) continue;
    size_t root = groups.root(id);
    if (!group_request[root]) {
      group_request[root] = requests[id];
      group_request[root]->device = requests[id]->device;
    }
  }

  for (OpId id = 0; id < n; ++id) {
    size_t root = groups.root(id);
    if (root != id) continue;
    const Op& leader = graph.op(id);
    bool cpu_only = group_cpu_only[root];
    if (!group_request[root]) {
      group_device[root] = default_device(cluster, cpu_only);
      continue;
    }
    const Request& request = *group_request[root];
    auto spec = DeviceName::parse(request.device, nullptr);
    std::vector<DeviceId> matches = spec ? cluster.match(*spec) : std::vector<DeviceId>{};
    if (matches.empty()) {
      if (!options.allow_soft_placement) {
        fail(request, "cannot place op \"" + leader.name + "\": no device matches \"" + request.device +
                          "\" (available: " + available_devices(cluster) +
                          "); set \"allow_soft_placement\": true to fall back to the default device");
      }
      group_device[root] = default_device(cluster, cpu_only);
      placement.notes.push_back("op \"" + leader.name + "\": no device matches \"" + request.device +
                                "\"; soft placement put it on " +
                                cluster.device(*group_device[root]).name.canonical());
      continue;
    }
    DeviceId chosen = matches.front();
    if (cpu_only && cluster.device(chosen).name.kind != DeviceKind::kCpu) {
      std::string cpu_op;
      for (OpId member = 0; member < n; ++member) {
        if (groups.root(member) == root && graph.op(member).cpu_only) {
          cpu_op = graph.op(member).name;
          break;
        }
      }
      if (!options.allow_soft_placement) {
        fail(request, "cannot place op \"" + cpu_op + "\" on " + cluster.device(chosen).name.canonical() +
                          ": it has no " + to_string(*cluster.device(chosen).name.kind) +
                          " kernel (CPU only); set \"allow_soft_placement\": true to move it to a CPU");
      }
      auto cpu = first_of_kind(cluster, DeviceKind::kCpu, cluster.device(chosen).node);
      group_device[root] = cpu ? *cpu : default_device(cluster, true);
      placement.notes.push_back("op \"" + cpu_op + "\" is CPU-only; soft placement moved it from " +
                                cluster.device(chosen).name.canonical() + " to " +
                                cluster.device(*group_device[root]).name.canonical());
      continue;
    }
    group_device[root] = chosen;
  }

  // Conflicting explicit requests inside one colocation group.
  for (OpId id = 0; id < n; ++id) {
    size_t root = groups.root(id);
    placement.device_of_op[id] = *group_device[root];
    if (!requests[id] || root == id || options.allow_soft_placement) continue;
    auto spec = DeviceName::parse(requests[id]->device, nullptr);
    if (spec && !spec->matches(cluster.device(*group_device[root]).name)) {
      fail(*requests[id], "op \"" + graph.op(id).name + "\" must be colocated with \"" + graph.op(root).name +
                              "\" on " + cluster.device(*group_device[root]).name.canonical() +
                              ", but is requested on \"" + requests[id]->device + "\"");
    }
  }
  return placement;
}

}  // namespace placesim
