// Collective schedules: an all-reduce, all-gather or reduce-scatter of S bytes over a group of
// devices as a small DAG of point-to-point transfers, for each algorithm; plus each algorithm's
// alpha-beta estimate and NCCL-style automatic choice. The SimGrid engine runs the schedules;
// the analytical tier and `algorithm: auto` use the estimates.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/collective_profile.h"
#include "sim/spec/collective_algorithm.h"
#include "sim/spec/nccl_version.h"

namespace placesim {

struct CollectiveStep {
  DeviceId from = 0;
  DeviceId to = 0;
  double bytes = 0;
  std::vector<size_t> deps;  ///< indices of earlier steps this one waits for
  /// Rounds this transfer stands for (per-phase fidelity: a whole ring phase on one hop, its
  /// `bytes` the rounds' total); the engine charges the route latency once per round.
  size_t latency_rounds = 1;
  /// Bytes the receiver adds into its own buffer once the transfer is in (reduce-scatter and
  /// reduce rounds; 0 in gathers and broadcasts); costed by reduction_seconds().
  double reduced_bytes = 0;
  /// The latency charged for each round after the first; negative: the route's own. A per-phase
  /// ring's hops take the ring's mean hop latency: a member sends a round's chunk once its
  /// predecessor's is in, so a chunk's rounds wait on the hops it travels, not each on the
  /// slowest (a ring across machines crosses the network on a few hops of many).
  double round_latency_seconds = -1;
};

/// Seconds `device` spends adding `bytes` received into its own buffer (read both, write one:
/// 3 x bytes of memory traffic at its memory bandwidth x memory efficiency, / speed factor).
/// CPUs only, which add after the copy (the real backend's copy threads, Gloo); GPUs and TPUs
/// add inside the kernels that move the data (NCCL's reduce-copy), where memory at 3x the
/// traffic still outruns the link, so the add costs them no time: 0.
double reduction_seconds(double bytes, const ClusterDevice& device);

/// The group's devices per cluster node (machine), machines in order of first appearance, each
/// machine's devices in group order.
std::vector<std::vector<DeviceId>> members_by_node(const std::vector<DeviceId>& group, const Cluster& cluster);

/// The group reordered into a ring that follows the topology, as NCCL searches for rings over
/// NVLink: from the first device, repeatedly the nearest unvisited one (the routing metric: the
/// sum over hops of latency + 1 MiB / bandwidth; ties keep group order): region_ring where the
/// network's dead-end regions give that ring exactly (fat trees: members in nodes under leaves
/// under a spine), else nearest_neighbour_ring, one nearest-first search per device; inside one
/// machine, where that walk's farthest hop is not the nearest any ring can have, the searched
/// ring of bandwidth_ring.h instead (a DGX-1's all-NVLink ring). Memoized in the cluster. Ring
/// and hierarchical schedules use it.
std::vector<DeviceId> topology_ring(const std::vector<DeviceId>& group, const Cluster& cluster);

/// Whether `algorithm` runs one flat ring: kRing (over topology_ring) or kRingInRankOrder (over
/// the group as given, NCCL 1.x's ring).
bool is_ring(CollectiveAlgorithm algorithm);
/// The ring a flat-ring algorithm runs over `group`.
std::vector<DeviceId> ring_of(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, const Cluster& cluster);

/// The rings a flat-ring algorithm runs over `group` at once, NCCL's channels, each carrying an
/// equal share of the buffer: for kRing, ring_of's ring and, inside one machine of GPUs, the
/// further rings at its rate its links leave room for (ring_channels.h), kept where together
/// they move more than the one ring (not on a PCIe tree or an NVSwitch, where every ring shares
/// each GPU's link); for kRingInRankOrder (NCCL 1.x) the one ring. Memoized in the cluster.
std::vector<std::vector<DeviceId>> ring_channels_of(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                                    const Cluster& cluster);

/// The rings of a hierarchical collective over `group`, per channel, per machine (machines in
/// order of first appearance): each machine's ring_channels_of over its members, channel c of
/// every machine together; where machines have different numbers of channels, one each (their
/// topology rings). Each channel carries an equal share of the buffer, its rails joining the
/// machines' devices of equal position in its rings.
std::vector<std::vector<std::vector<DeviceId>>> hierarchical_channels(const std::vector<DeviceId>& group,
                                                                      const Cluster& cluster);

/// The transfers of an all-reduce of `bytes` (each device's buffer) over `group`.
/// Ring: 2(N-1) rounds of S/N; tree: NCCL's two trees (nccl_trees.h), each reducing S/2 up and
/// then broadcasting it down, pipelined in chunks (per round: tree_chunk_count chunks, each sent
/// once it came from below and the one before it left; per phase: the first chunk so, the rest
/// as one flow behind it); halving-doubling: log2 N rounds each way (N must be a power of two);
/// hierarchical: ring reduce-scatter inside each node, ring all-reduce of each shard across
/// nodes, ring all-gather inside each node (every node must hold the same number of devices),
/// over each of hierarchical_channels' channels with its share;
/// host halving-doubling (Gloo's, as Caffe2 ran it): inside each node a ring reduce-scatter and
/// the shards to its first device, that device's copy to the node's nearest CPU, halving-doubling
/// between the CPUs (their adds on the CPUs), the copy back, the shards out and a ring all-gather
/// (a power-of-two number of nodes, each with the same number of devices and a CPU).
/// Per-phase fidelity keeps the halving-doubling schedule (O(N log N) steps), runs the trees as
/// four flows per edge (O(N)) and turns each ring pass into one step per ring hop: participant i sends `rounds` x chunk to
/// i+1 once i and i-1 have their inputs, the latency charged `rounds` times. For a lone ring the
/// end time is the same, 2(N-1)(a + S/(N B)) over its slowest hop; the real backend executes
/// the per-round schedule.
/// Throws std::invalid_argument when the group does not fit the algorithm (see applicable()).
std::vector<CollectiveStep> allreduce_schedule(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                               double bytes, const Cluster& cluster,
                                               CollectiveFidelity fidelity = CollectiveFidelity::kPerRound);

/// The transfers of a collective of `kind` over `group`. `bytes` is nccl-tests' "size" for that
/// collective: each device's buffer for an all-reduce; the whole gathered tensor for an
/// all-gather (each device contributes bytes / N) and the whole tensor each device reduces for a
/// reduce-scatter (each device ends with its bytes / N, reduced). All-reduce is
/// allreduce_schedule. All-gather and reduce-scatter run as NCCL runs them, as rings: kRing, one
/// ring pass of N-1 rounds of S/N (the reduce-scatter's received chunks added into the
/// receiver's buffer); kHierarchical, the rings of NCCL's channels across machines, one per local
/// rank ("rails", each through its own NIC): a reduce-scatter is hierarchical_schedule's first
/// half (ring reduce-scatter inside each node, then across the nodes' devices of equal local
/// rank), an all-gather its second half (across the rails, then inside each node). Throws
/// std::invalid_argument for another kind or algorithm, or one that does not apply.
std::vector<CollectiveStep> collective_schedule(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                                const std::vector<DeviceId>& group, double bytes,
                                                const Cluster& cluster,
                                                CollectiveFidelity fidelity = CollectiveFidelity::kPerRound);

/// Whether collective tasks of `kind` can be planned and run: all-reduce, all-gather,
/// reduce-scatter and all-to-all; `algorithm` any but pairwise for all-reduce, ring or
/// hierarchical for all-gather and reduce-scatter, pairwise for all-to-all (every device's 1/n
/// of the buffer to every other at once: the estimate is the slowest pair's latency plus the
/// busiest sender's sends one after another at each pair's bandwidth). `why` says why not.
bool collective_supported(CollectiveKind kind, CollectiveAlgorithm algorithm, std::string* why);

/// Whether `algorithm` runs on any group (ring, double binary tree), so that applicable() need
/// not look at the group; the others need some group shape (a power-of-two size or machine count,
/// as many devices per machine, routes between every two members).
bool applies_to_any_group(CollectiveAlgorithm algorithm);

/// Whether `algorithm` can run on `group`; `why` says why not.
bool applicable(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, const Cluster& cluster,
                std::string* why);

/// Alpha-beta estimate of the all-reduce's time on `group`, with each hop's latency and
/// bandwidth read from the cluster's routes (the slowest pair used counts):
///   ring:             2(N-1) a + 2(N-1)/N S/(C B) + (N-1) r(S/N)
///   tree:             2 (D (a + h/B) + a + (S/2 - h)/B) + r_max, D the trees' depth, h NCCL's
///                     first chunk (tree_chunk_bytes), B the narrowest link direction over the
///                     transfers of a phase (both trees at once), r_max the adds of the member
///                     receiving the most
///   halving-doubling: 2 log2(N) a + 2(N-1)/N S/B + r((N-1)/N S)
///   hierarchical:     2(g-1)(a_l + S/(g C B_l)) + 2(M-1)(a_g + S/(g C M B_g)) + (g-1) r(S/(g C))
///                     + (M-1) r(S/(g C M)), g per node, M nodes
///   host halving-doubling: 2(g-1)(a_l + S/(g B_l)) + 2(a_r + S/(g B_r)) + 2(a_p + S/B_p)
///                     + 2 log2(M) a_g + 2(M-1)/M S/B_g + r_cpu((M-1)/M S), r the shards' hops to the
///                     first device, p the copies to the CPU, g the CPUs' routes
/// where C is the number of NCCL's channels (ring_channels_of, hierarchical_channels: 1 but on
/// GPUs of NVLink meshes), B a ring's rate with all of them running, and r(x) =
/// reduction_seconds(x) on the slowest member (0 on GPUs): the adds of the reduce
/// rounds, on the critical path of every reducing round (the adds of one round's transfers run
/// side by side, as the engine runs them).
double allreduce_estimate_seconds(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group, double bytes,
                                  const Cluster& cluster);

/// The alpha-beta estimate of a collective of `kind` (bytes as collective_schedule() takes them):
/// all-reduce as allreduce_estimate_seconds; all-gather and reduce-scatter ([r] only for the
/// reduce-scatter's adds):
///   ring:         (N-1)(a + S/(N C B) [+ r(S/N)])
///   hierarchical: (g-1)(a_l + S/(g C B_l) [+ r(S/(g C))]) + (M-1)(a_g + S/(g C M B_g) [+ r(S/(g C M))])
double collective_estimate_seconds(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                   const std::vector<DeviceId>& group, double bytes, const Cluster& cluster);

/// The algorithm with the lowest estimate for a collective of `kind`: choose_allreduce for an
/// all-reduce; ring or hierarchical (on several machines) for an all-gather or reduce-scatter.
CollectiveAlgorithm choose_collective_algorithm(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes,
                                                const Cluster& cluster, std::string* reason);

/// The applicable algorithm with the lowest estimate (as NCCL picks by size and topology);
/// `reason` lists the estimates.
CollectiveAlgorithm choose_allreduce(const std::vector<DeviceId>& group, double bytes, const Cluster& cluster,
                                     std::string* reason);

/// The algorithm NCCL's tuner would pick, by NCCL's own times (nccl_collective_time): its ring
/// (`ring`; across machines of several GPUs each, the same number on each, its rings through every
/// GPU, one channel per GPU of a machine: machine_channel_rings; until 2026-12-08 placesim's
/// `hierarchical` there) or, for an all-reduce from NCCL 2.4 on, its trees (NCCL's docs,
/// NCCL_ALGO: Ring, Tree; nccl_trees.h). NCCL 1.x: its one ring in rank order. No
/// halving-doubling, which is MPI's and Gloo's (Rabenseifner). For the GPU frameworks (Horovod,
/// PyTorch DDP, Megatron, 3D parallelism).
CollectiveAlgorithm choose_nccl_algorithm(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes,
                                          const Cluster& cluster, std::string* reason, NcclVersion version = {});

}  // namespace placesim
