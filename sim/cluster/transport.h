// Transport: how a framework moves one message between two processes, beyond what the links
// charge: a cap on one message stream's rate (gRPC's serialising pipeline), the payload share
// of the bytes on the wire (protocol headers), CPU time and copies through host memory on each
// side (which then keep that CPU busy), and the share of a GPU's compute its collectives take
// while they overlap computation (NCCL's kernels run on the SMs). docs/communication.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

struct Transport {
  std::string id;  ///< "grpc_tcp", "tcp", "rdma_verbs", "nccl", or a user's name
  /// Most bytes per second one message moves, whatever the links allow (0: the links only).
  double stream_bytes_per_second = 0;
  /// Payload bytes per byte on the wire (headers, framing): the link carries bytes / this.
  double wire_efficiency = 1.0;
  /// Share of its links' rate the transport's software reaches on them, whatever the wire allows
  /// (NCCL's socket proxy threads over TCP): a message holds its links for bytes / (wire
  /// efficiency x this). Not applied where a measured curve times a collective (the curve
  /// measured what the software reached).
  double link_rate_share = 1.0;
  /// CPU time per message on the sending and on the receiving host (RPC, syscalls, polling).
  double host_seconds_per_message = 0;
  /// Copies of the message through host memory on each side (serialise, socket buffers).
  int host_copies_per_side = 0;
  /// Collectives: share of each member GPU's compute taken while the collective is in flight.
  double gpu_compute_share = 0;
  std::string source;  ///< where each number comes from

  /// Payload bytes per byte the links carry, and the time they are held for: wire_efficiency x
  /// link_rate_share.
  double link_efficiency() const { return wire_efficiency * link_rate_share; }
  /// Whether the transport costs anything beyond the links.
  bool costs_host() const { return host_seconds_per_message > 0 || host_copies_per_side > 0; }
};

/// The bundled transports, each number with its source (sim/cluster/transport.cpp).
const std::vector<Transport>& bundled_transports();
/// A bundled transport by id; nullopt when there is none.
std::optional<Transport> find_transport(const std::string& id);
/// Ids of the bundled transports, for error messages.
std::vector<std::string> transport_ids();
/// Whether collectives over `transport` run in NCCL: one of NCCL's bundled transports (nccl,
/// nccl_ib, nccl_socket), or a scenario's transport object given one of their ids. NCCL has ring
/// and tree all-reduces (and one ring per NIC between machines), not halving-doubling.
bool is_nccl_transport(const Transport& transport);

}  // namespace placesim
