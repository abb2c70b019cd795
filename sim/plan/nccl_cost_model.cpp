#include "sim/plan/nccl_cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "sim/plan/collective_schedule.h"

namespace placesim {
namespace {

// Every constant below is NCCL's own (NVIDIA/nccl 2.20.3, b6475625, src/graph/tuning.cc), the
// numbers its tuner uses to choose an algorithm and protocol; NCCL's comments call them
// latencies in microseconds and bandwidths in GB/s. Indexed [protocol]: LL, LL128, Simple.
constexpr double kMicro = 1e-6;
constexpr double kRingBaseLatency[3] = {6.6, 14.0, 8.4};  // baseLat[Ring]
constexpr double kTreeBaseLatency[3] = {6.8, 14.0, 0.0};  // baseLat[Tree]
// hwLat[NVLink | PCI | NET][Ring | Tree]: each ring step's or tree level's latency.
constexpr double kRingStepLatency[3][3] = {{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}};
constexpr double kTreeStepLatency[3][3] = {{0.6, 1.25, 28.0}, {1.0, 1.9, 28.0}, {5.0, 8.5, 28.0}};
// A tree's Simple level as the collective takes it: NCCL's 28 us "is the latency a 256kB chunk,
// which is ~ base lat + 256k/12GB/s" (its comment), so 28 - 21.8 = 6.2 us beyond the chunk, which
// placesim's tree moves on the links itself (tree_phase's fill).
constexpr double kTreeSimpleLevelBeyondChunk = 6.2;
constexpr int kNvLink = 0, kPci = 1, kNet = 2;
// getNetOverhead: an x86 host's network post overhead, Intel's and AMD's, x3 under Simple, a
// floor on a ring's intra-node steps when the ring crosses machines.
constexpr double kNetOverheadIntel = 1.0, kNetOverheadAmd = 2.0;
// ncclTopoGetAlgoTime's "plateau effect of ring": a Simple all-reduce across machines.
constexpr double kRingPlateauBeforeAmpere = 1.9, kRingPlateauFromAmpere = 1.4;
// llMaxBws[GPU generation or host][machines]: LL's bus bandwidth cap, GB/s. In one machine by
// GPU (Volta, Ampere, Hopper); across machines by host ([Intel, AMD][2 machines, more]).
constexpr double kLowLatencyCapOneMachine[3] = {39.0, 87.7, 87.7};
constexpr double kLowLatencyCapAcross[2][2] = {{39.0, 20.4}, {22.5, 19.0}};
// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MiB: the tree's bandwidth at
// medium sizes, below its model, as NCCL's tuner believes it.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

int index_of(NcclProtocol protocol) { return static_cast<int>(protocol); }

bool is_tree(CollectiveAlgorithm algorithm) { return algorithm == CollectiveAlgorithm::kDoubleBinaryTree; }

/// Whether NCCL's model covers the pair: ring (and placesim's hierarchical rings, timed with the
/// ring's latencies) for all-reduce, all-gather and reduce-scatter; tree for all-reduce.
bool modelled(CollectiveKind kind, CollectiveAlgorithm algorithm) {
  const bool ring_kind = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kAllGather ||
                         kind == CollectiveKind::kReduceScatter;
  if (is_ring(algorithm) || algorithm == CollectiveAlgorithm::kHierarchical) return ring_kind;
  return is_tree(algorithm) && kind == CollectiveKind::kAllReduce;
}

double low_latency_cap_bytes_per_second(const NcclGroupShape& shape) {
  double gigabytes = 0;
  if (shape.nodes <= 1) {
    gigabytes = kLowLatencyCapOneMachine[shape.compute_capability >= 90 ? 2 : shape.compute_capability >= 80 ? 1 : 0];
  } else {
    gigabytes = kLowLatencyCapAcross[shape.amd_hosts ? 1 : 0][shape.nodes == 2 ? 0 : 1];
  }
  return gigabytes * 1e9;
}

int floor_log2(double x) { return x >= 1 ? static_cast<int>(std::floor(std::log2(x))) : 0; }

/// A route between two GPUs of one machine over NVLink (or NVSwitch) links only.
bool over_nvlink(DeviceId a, DeviceId b, const Cluster& cluster) {
  if (!cluster.reachable(a, b)) return false;
  for (const RouteHop& hop : cluster.route(a, b)) {
    const std::string& type = cluster.links()[hop.link].spec.type;
    if (type.rfind("nvlink", 0) != 0 && type.rfind("nvswitch", 0) != 0) return false;
  }
  return true;
}

}  // namespace

std::string to_string(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLowLatency: return "LL";
    case NcclProtocol::kLowLatency128: return "LL128";
    case NcclProtocol::kSimple: return "Simple";
  }
  return "Simple";
}

std::optional<NcclGroupShape> nccl_group_shape(const std::vector<DeviceId>& group, const Cluster& cluster) {
  NcclGroupShape shape;
  shape.ranks = static_cast<int64_t>(group.size());
  std::set<int> nodes;
  std::set<std::string> capabilities;
  for (DeviceId d : group) {
    const ClusterDevice& device = cluster.device(d);
    if (device.spec.kind != DeviceKind::kGpu) return std::nullopt;
    nodes.insert(device.node);
    capabilities.insert(device.spec.compute_capability);
  }
  shape.nodes = static_cast<int64_t>(nodes.size());
  DeviceName host;  // CPU:0 of the first member's machine
  host.task = cluster.device(group.front()).name.task;
  host.kind = DeviceKind::kCpu;
  host.index = 0;
  for (DeviceId cpu : cluster.match(host)) {
    if (cluster.device(cpu).node != cluster.device(group.front()).node) continue;
    const std::string& name = cluster.device(cpu).spec.name;
    shape.amd_hosts = name.find("AMD") != std::string::npos || name.find("EPYC") != std::string::npos;
    break;
  }
  if (capabilities.size() == 1) {
    const std::string& text = *capabilities.begin();
    const size_t dot = text.find('.');
    if (dot != std::string::npos && dot > 0 && dot + 1 < text.size()) {
      try {
        shape.compute_capability = std::stoi(text.substr(0, dot)) * 10 + std::stoi(text.substr(dot + 1));
      } catch (const std::exception&) {
        shape.compute_capability = 0;
      }
    }
  }
  // The first two members on one machine say how its GPUs are joined (NCCL: the ring graph's
  // intra-node link type); a group of one GPU per machine has no step inside one.
  std::map<int, DeviceId> first_on_node;
  for (DeviceId d : group) {
    auto [it, first] = first_on_node.emplace(cluster.device(d).node, d);
    if (!first) {
      shape.nvlink_inside = over_nvlink(it->second, d, cluster);
      break;
    }
  }
  return shape;
}

double nccl_latency_seconds(CollectiveKind kind, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                            const NcclGroupShape& shape, double bytes, NcclTimes times) {
  const int p = index_of(protocol);
  const int inside = shape.nvlink_inside ? kNvLink : kPci;
  const double ranks = static_cast<double>(shape.ranks), nodes = static_cast<double>(shape.nodes);
  if (is_tree(algorithm)) {
    const double per_node = std::floor(ranks / std::max(nodes, 1.0));
    const bool beyond_chunk = times == NcclTimes::kTaken && protocol == NcclProtocol::kSimple;
    const double level_inside = beyond_chunk ? kTreeSimpleLevelBeyondChunk : kTreeStepLatency[inside][p];
    const double level_across = beyond_chunk ? kTreeSimpleLevelBeyondChunk : kTreeStepLatency[kNet][p];
    return (kTreeBaseLatency[p] + 2 * ((per_node - 1) * level_inside + floor_log2(nodes) * level_across)) * kMicro;
  }
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  const double steps = all_reduce ? 2 * (ranks - 1) : ranks - 1;
  const double network_steps = all_reduce ? (nodes > 1 ? 2 * nodes : 0) : nodes - 1;
  double intra = kRingStepLatency[inside][p];
  if (nodes > 1) {
    const double overhead = shape.amd_hosts ? kNetOverheadAmd : kNetOverheadIntel;
    intra = std::max(intra, overhead * (protocol == NcclProtocol::kSimple ? 3 : 1));
  }
  double latency = kRingBaseLatency[p] + std::max(0.0, steps - network_steps) * intra +
                   network_steps * kRingStepLatency[kNet][p];
  if (protocol == NcclProtocol::kSimple && nodes > 1 && all_reduce && bytes / ranks >= 64) {
    latency *= shape.compute_capability >= 80 ? kRingPlateauFromAmpere : kRingPlateauBeforeAmpere;
  }
  return latency * kMicro;
}

double nccl_bandwidth_slowdown(CollectiveKind kind, CollectiveAlgorithm algorithm, NcclProtocol protocol,
                               const NcclGroupShape& shape, double bytes, double simple_bus_bytes_per_second,
                               NcclTimes times) {
  const double cap = low_latency_cap_bytes_per_second(shape);
  if (is_tree(algorithm)) {
    // As NCCL's tuner believes: Simple 1 / 0.92, LL 3.8 / 0.92, LL128 1 / (0.92 x 7/9) in one
    // machine and 1 / (0.92 x 120/128) across, each / its correction at medium sizes. As taken:
    // Simple at the links' rate, LL128 at 120 of every 128 bytes (its lines' flags), LL 3.8.
    if (times == NcclTimes::kTaken) {
      if (protocol == NcclProtocol::kLowLatency) return std::max(3.8, simple_bus_bytes_per_second / cap);
      return protocol == NcclProtocol::kLowLatency128 ? 128.0 / 120.0 : 1.0;
    }
    const int size_index = floor_log2(bytes / 64);
    const double correction = size_index < 23 ? kTreeCorrection[index_of(protocol)][size_index] : 1.0;
    double slowdown = 1 / 0.92;
    if (protocol == NcclProtocol::kLowLatency) {
      slowdown = std::max(3.8 / 0.92, simple_bus_bytes_per_second / cap);
    } else if (protocol == NcclProtocol::kLowLatency128) {
      slowdown = 1 / (0.92 * (shape.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0));
    }
    return slowdown / correction;
  }
  switch (protocol) {
    case NcclProtocol::kSimple: return 1.0;
    case NcclProtocol::kLowLatency: {
      const bool quarter = shape.nodes > 1 || kind == CollectiveKind::kAllReduce;
      return std::max(quarter ? 4.0 : 3.0, simple_bus_bytes_per_second / cap);
    }
    case NcclProtocol::kLowLatency128: {
      const double per_node = static_cast<double>(shape.ranks) / static_cast<double>(std::max<int64_t>(shape.nodes, 1));
      return per_node < 2 ? 1 / 0.7 : 1 / 0.92;
    }
  }
  return 1.0;
}

bool nccl_protocol_enabled(NcclProtocol protocol, const NcclGroupShape& shape) {
  if (protocol != NcclProtocol::kLowLatency128) return true;
  const int cc = shape.compute_capability;
  return shape.nvlink_inside && (cc == 70 || cc == 80 || cc == 90);
}

std::optional<NcclCollectiveTime> nccl_collective_time(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                       const std::vector<DeviceId>& group, double bytes,
                                                       const Cluster& cluster, double link_efficiency, NcclTimes times) {
  if (!modelled(kind, algorithm)) return std::nullopt;
  const std::optional<NcclGroupShape> shape = nccl_group_shape(group, cluster);
  if (!shape) return std::nullopt;
  NcclCollectiveTime best;
  if (group.size() < 2 || !(bytes > 0)) return best;
  const double estimate = collective_estimate_seconds(kind, algorithm, group, bytes, cluster);
  best.link_latency_seconds = collective_estimate_seconds(kind, algorithm, group, 0.0, cluster);
  if (!std::isfinite(estimate) || !std::isfinite(best.link_latency_seconds)) {
    best.seconds = std::numeric_limits<double>::infinity();  // some pair has no route
    return best;
  }
  const double wire = std::max(0.0, estimate - best.link_latency_seconds) / link_efficiency;
  best.links_seconds = wire + best.link_latency_seconds;
  const double bus = wire > 0 ? bytes * bus_bandwidth_factor(kind, static_cast<int>(group.size())) / wire
                              : std::numeric_limits<double>::infinity();
  auto time_with = [&](NcclProtocol protocol, NcclTimes which, double* latency) {
    *latency = nccl_latency_seconds(kind, algorithm, protocol, *shape, bytes, which);
    return *latency + (wire > 0 ? wire * nccl_bandwidth_slowdown(kind, algorithm, protocol, *shape, bytes, bus, which) : 0.0);
  };
  // NCCL runs the protocol its tuner believes fastest; the collective then takes that protocol's time.
  double believed = std::numeric_limits<double>::infinity();
  for (NcclProtocol protocol : {NcclProtocol::kLowLatency, NcclProtocol::kLowLatency128, NcclProtocol::kSimple}) {
    if (!nccl_protocol_enabled(protocol, *shape)) continue;
    double latency = 0;
    const double seconds = time_with(protocol, NcclTimes::kTunerBelieves, &latency);
    if (seconds < believed) {
      believed = seconds;
      best.protocol = protocol;
      best.latency_seconds = latency;
    }
  }
  best.seconds = times == NcclTimes::kTunerBelieves ? believed : time_with(best.protocol, times, &best.latency_seconds);
  // The links' own alpha-beta time stays a floor: the SimGrid engine's transfers charge it, and
  // both tiers then agree (the links' estimate takes the slowest hop's latency for every step).
  best.seconds = std::max(best.seconds, best.links_seconds);
  return best;
}

double collective_seconds_over(CollectiveKind kind, CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                               double bytes, const Cluster& cluster, const Transport* transport) {
  const double efficiency = transport ? transport->link_efficiency() : 1.0;
  if (transport && is_nccl_transport(*transport)) {
    if (auto nccl = nccl_collective_time(kind, algorithm, group, bytes, cluster, efficiency)) return nccl->seconds;
  }
  // The efficiency stretches the bandwidth term (the latency is small beside it).
  return collective_estimate_seconds(kind, algorithm, group, bytes, cluster) / efficiency;
}

}  // namespace placesim
