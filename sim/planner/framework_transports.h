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

/// What a device's next data-parallel collective waits for when `concurrent` of them run at once
/// (CommunicationOptions::concurrent_collectives): the one `concurrent` back among `so_far`, its
/// collectives in emission order; none while fewer have been emitted.
std::optional<TaskId> collective_to_wait_for(const std::vector<TaskId>& so_far, int64_t concurrent);

/// Index of `transport` in plan->transports, added the first time.
int plan_transport_index(ExecutionPlan* plan, const Transport& transport);

}  // namespace placesim
