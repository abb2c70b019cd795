// NCCL's own cost model of a collective, as its tuner computes it to pick an algorithm and a
// protocol (NVIDIA/nccl 2.20.3, src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime):
// a latency per ring step or tree level that NCCL's kernels and network proxies add beyond the
// wire, by link type (NVLink, PCIe, network) and protocol (LL, LL128, Simple), and each
// protocol's share of the bandwidth. placesim keeps its own bandwidth term (the algorithm's
// alpha-beta estimate over the cluster's links) and puts NCCL's latencies in place of the links'.
// NCCL picks by what its tuner believes; a tree then takes what a measured tree shows (NcclTimes).
// docs/communication.md, "NCCL's latency and protocols" and "NCCL's trees".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/collective_profile.h"
#include "sim/cluster/transport.h"
#include "sim/spec/collective_algorithm.h"

namespace placesim {

enum class NcclProtocol { kLowLatency, kLowLatency128, kSimple };

/// Which of NCCL's times: what a collective takes (NCCL's constants, but a tree's Simple levels
/// and bandwidth from a measured table: docs/communication.md, "NCCL's trees"), or what NCCL's
/// tuner believes it takes (its constants throughout), by which NCCL picks the algorithm and the
/// protocol it runs.
enum class NcclTimes { kTaken, kTunerBelieves };
std::string to_string(NcclProtocol protocol);  ///< "LL", "LL128", "Simple"

/// What NCCL's model reads of a group: its ranks, machines, whether the GPUs of a machine talk
/// over NVLink (else PCIe), their compute capability (major x 10 + minor; 0 when mixed), and
/// whether the hosts are AMD's (NCCL's network post overhead and LL caps differ from Intel's).
struct NcclGroupShape {
  int64_t ranks = 0;
  int64_t nodes = 0;
  bool nvlink_inside = false;
  int compute_capability = 0;
  bool amd_hosts = false;
};

/// The group's shape, or nullopt when NCCL does not run it: a member that is not a GPU. The
/// hosts are AMD's when the first member's machine has a CPU:0 whose profile names AMD.

std::optional<NcclGroupShape> nccl_group_shape(const std::vector<DeviceId>& group, const Cluster& cluster);

/// NCCL's latency for a collective of `bytes` with `algorithm` and `protocol` (seconds): for a
/// ring, base + (steps - network steps) x intra + network steps x network, steps = 2 (n - 1) for
/// an all-reduce and n - 1 for an all-gather or reduce-scatter, network steps 2 x nodes and
/// nodes - 1 across machines (0 in one); on several machines a step inside one costs at least
/// the network post overhead (1 us on Intel hosts, 2 on AMD's; x3 under Simple); a Simple all-reduce across machines x1.9
/// (compute capability < 8.0) or x1.4 (the ring's plateau effect). For a tree (all-reduce only):
/// base + 2 ((n / nodes - 1) x intra + log2(nodes) x network), where a level under Simple costs
/// NCCL's tuner 28 us and is taken as 6.2 us: the 28 us is, by NCCL's own comment, a 256 KiB chunk
/// at 12 GB/s (21.8 us) plus that, and placesim's tree times its chunks on the links (its
/// pipeline's fill). Constants in nccl_cost_model.cpp.
double nccl_latency_seconds(CollectiveKind kind, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                            const NcclGroupShape& shape, double bytes, NcclTimes times = NcclTimes::kTaken);

/// How much longer a protocol moves the bytes than Simple on the same links (NCCL's bandwidth
/// refinements): ring LL 4 (3 for an all-gather or reduce-scatter in one machine) and at least
/// Simple's bus bandwidth / LL's cap; ring LL128 1 / 0.92 (1 / 0.7 with one GPU per machine);
/// tree as taken Simple 1, LL 3.8 (and at least that ratio), LL128 128/120 (its lines' flags); as
/// NCCL's tuner believes, Simple 1 / 0.92, LL 3.8 / 0.92, LL128 1 / (0.92 x 7/9) in one machine
/// and 1 / (0.92 x 120/128) across, each / its tree correction factor at this size (0.4-1.0,
/// powers of two from 64 B to 256 MiB), which a measured tree does not show (docs/communication.md,
/// "NCCL's trees": five GPUs of a DGX-1 V100).
/// `simple_bus_bytes_per_second`: Simple's bus bandwidth (nccl-tests' busbw) on these links.
double nccl_bandwidth_slowdown(CollectiveKind kind, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                               const NcclGroupShape& shape, double bytes, double simple_bus_bytes_per_second,
                               NcclTimes times = NcclTimes::kTaken);

/// Whether NCCL enables `protocol` on this group by default: LL and Simple always; LL128 on
/// NVLink inside machines of GPUs of one compute capability 7.0, 8.0 or 9.0 (NCCL's NIC-locality
/// condition assumed met, as on DGX/HGX boards).
bool nccl_protocol_enabled(NcclProtocol protocol, const NcclGroupShape& shape);

struct NcclCollectiveTime {
  double seconds = 0;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_seconds = 0;  ///< NCCL's latency of the chosen protocol
  /// The links' latency in placesim's estimate, which NCCL's latency replaces.
  double link_latency_seconds = 0;
  /// The links' alpha-beta time: their latency plus the bytes at the transport's link efficiency,
  /// what the SimGrid engine's transfers take; a floor on `seconds`.
  double links_seconds = 0;
};

/// The collective as NCCL would run it: the protocol its tuner believes fastest (`times`
/// kTunerBelieves: that belief, by which NCCL also picks the algorithm; kTaken: what that
/// protocol takes), its latency plus the
/// algorithm's bandwidth term on the cluster's links (collective_estimate_seconds less its
/// latency, i.e. less its estimate of an empty message) x the protocol's slowdown, over
/// `link_efficiency` (the transport's, Transport::link_efficiency), and no less than the links'
/// own alpha-beta time (`links_seconds`; the SimGrid engine's transfers take that, and the links'
/// estimate charges every step the slowest hop's latency: on large groups across machines it can
/// exceed NCCL's, and then stands, so that both tiers agree). nullopt where NCCL's model
/// does not apply: an all-to-all, an algorithm NCCL lacks (halving-doubling, Gloo's), a group
/// that is not all GPUs. kHierarchical (a scenario's choice; NCCL's ring across machines until
/// 2026-12-08) takes the ring's latencies.
std::optional<NcclCollectiveTime> nccl_collective_time(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                       const std::vector<DeviceId>& group, double bytes,
                                                       const Cluster& cluster, double link_efficiency = 1.0,
                                                       NcclTimes times = NcclTimes::kTaken);

/// A collective's time without a measured curve: over one of NCCL's transports (is_nccl_transport)
/// nccl_collective_time's where its model applies, else the algorithm's alpha-beta estimate on the
/// links (collective_estimate_seconds) over the transport's link efficiency (null: the links only).
double collective_seconds_over(CollectiveKind kind, CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                               double bytes, const Cluster& cluster, const Transport* transport);

}  // namespace placesim
