// Which transport moves each message and collective of a data-parallel plan under the
// strategy's framework (sim/spec/framework.h), and the plan's table of them.
#pragma once

#include <optional>
#include <vector>

#include "sim/plan/execution_plan.h"
#include "sim/spec/framework.h"

namespace placesim {

/// The transport of a parameter-server message from `from` to `to`: between machines, the
/// override or the framework's (TensorFlow 1.x: gRPC over TCP); inside one machine none (one
/// process copies through the links: cudaMemcpy); none for "links".
std::optional<Transport> message_transport(const CommunicationOptions& options, const Cluster& cluster,
                                           DeviceId from, DeviceId to);

/// The transport of an all-reduce over `group`: NCCL inside one machine; across machines the
/// override, else NCCL over InfiniBand/RoCE when the route between the group's first machines
/// crosses such a link, else NCCL's socket transport (TensorFlow 1.x: gRPC); none for "links".
std::optional<Transport> collective_transport(const CommunicationOptions& options, const Cluster& cluster,
                                              const std::vector<DeviceId>& group);

/// SMs NCCL runs per network card for collectives across machines, one thread block per channel:
/// "If you have a PCI system with a single NIC ... it should just launch 2 SMs. If you are on DGX
/// with 8 NICs ... it would use 16 SMs" (NCCL's maintainer, NVIDIA/nccl#689).
inline constexpr double kNcclSmsPerNic = 2;

/// The share of `device`'s GPU that NCCL's collectives across machines take while they overlap
/// compute: kNcclSmsPerNic x its node's network cards / its SMs (at most 1); `fallback` where
/// the cluster does not know its nodes' cards (not built from a template) or the GPU's SMs.
double nccl_network_share(const Cluster& cluster, DeviceId device, double fallback);

/// Index of `transport` in plan->transports, added the first time.
int plan_transport_index(ExecutionPlan* plan, const Transport& transport);

}  // namespace placesim
