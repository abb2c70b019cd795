#include "sim/planner/framework_transports.h"

#include <algorithm>
#include <stdexcept>

namespace placesim {
namespace {

Transport bundled(const char* id) {
  auto transport = find_transport(id);
  if (!transport) throw std::logic_error(std::string("no bundled transport ") + id);
  return *transport;
}

/// Whether the route from `from` to `to` crosses an RDMA-capable link (InfiniBand or RoCE).
bool route_has_rdma(const Cluster& cluster, DeviceId from, DeviceId to) {
  for (const RouteHop& hop : cluster.route(from, to)) {
    const std::string& type = cluster.links()[hop.link].spec.type;
    if (type.rfind("ib_", 0) == 0 || type.rfind("roce", 0) == 0) return true;
  }
  return false;
}

/// SMs NCCL runs per network card for collectives across machines, one thread block per channel:
/// "If you have a PCI system with a single NIC ... it should just launch 2 SMs. If you are on DGX
/// with 8 NICs ... it would use 16 SMs" (NCCL's maintainer, NVIDIA/nccl#689).
constexpr double kNcclSmsPerNic = 2;

/// The share of `device`'s GPU that NCCL's collectives across machines take while they overlap
/// compute: kNcclSmsPerNic x its node's network cards / its SMs (at most 1); `fallback` where
/// the cluster does not know its nodes' cards (not built from a template) or the GPU's SMs. A
/// plan keeps one transport per id (plan_transport_index): machines of different cards in one
/// cluster share the first one's.
double nccl_network_share(const Cluster& cluster, DeviceId device, double fallback) {
  const ClusterDevice& gpu = cluster.device(device);
  const size_t node = static_cast<size_t>(gpu.node);
  if (gpu.spec.sm_count <= 0 || node >= cluster.nics_per_node.size()) return fallback;
  return std::min(1.0, kNcclSmsPerNic * cluster.nics_per_node[node] / static_cast<double>(gpu.spec.sm_count));
}

}  // namespace

std::optional<Transport> message_transport(const CommunicationOptions& options, const Cluster& cluster,
                                           DeviceId from, DeviceId to) {
  if (options.framework == Framework::kLinksOnly && !options.transport) return std::nullopt;
  if (cluster.device(from).node == cluster.device(to).node) return std::nullopt;
  if (options.transport) return options.transport;
  if (options.framework == Framework::kTensorFlow1) return bundled("grpc_tcp");
  return bundled(route_has_rdma(cluster, from, to) ? "rdma_verbs" : "tcp");
}

std::optional<Transport> collective_transport(const CommunicationOptions& options, const Cluster& cluster,
                                              const std::vector<DeviceId>& group) {
  if (group.size() < 2) return std::nullopt;
  if (options.framework == Framework::kLinksOnly && !options.transport) return std::nullopt;
  const int node = cluster.device(group.front()).node;
  DeviceId other_machine = group.front();
  for (DeviceId device : group) {
    if (cluster.device(device).node != node) {
      other_machine = device;
      break;
    }
  }
  if (other_machine == group.front()) {
    return options.framework == Framework::kLinksOnly ? std::nullopt : std::optional<Transport>(bundled("nccl"));
  }
  if (options.transport) return options.transport;
  if (options.framework == Framework::kTensorFlow1) return bundled("grpc_tcp");
  Transport network = bundled(route_has_rdma(cluster, group.front(), other_machine) ? "nccl_ib" : "nccl_socket");
  network.gpu_compute_share = nccl_network_share(cluster, group.front(), network.gpu_compute_share);
  return network;
}

std::optional<TaskId> collective_to_wait_for(const std::vector<TaskId>& so_far, int64_t concurrent) {
  const size_t back = static_cast<size_t>(std::max<int64_t>(1, concurrent));
  if (so_far.size() < back) return std::nullopt;
  return so_far[so_far.size() - back];
}

int plan_transport_index(ExecutionPlan* plan, const Transport& transport) {
  for (size_t i = 0; i < plan->transports.size(); ++i) {
    if (plan->transports[i].id == transport.id) return static_cast<int>(i);
  }
  plan->transports.push_back(transport);
  return static_cast<int>(plan->transports.size() - 1);
}

}  // namespace placesim
