// How big a plan will be, estimated before it is built, so that a scenario beyond this machine is
// refused up front with the memory it would need (docs/reliability.md, "Limits") instead of being
// killed for running out of memory halfway through planning or simulating.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/plan/nccl_trees.h"
#include "sim/spec/collective_algorithm.h"

namespace placesim {

/// Host memory per task, planning and simulation together. Measured: ResNet-50 on a DGX-1 for
/// 1000 steps (459,000 tasks) peaks about 190 B per task above an empty run in `placesim check`
/// and about 370 B in `placesim run`; rounded up to 1 KiB for long op names and headroom.
inline constexpr double kHostBytesPerTask = 1024;

/// Plans beyond this many tasks are refused on any machine: at 1 KiB each they need ~100 GB, and
/// simulating them would take hours.
inline constexpr double kMaxPlanTasks = 1e8;

/// Transfers of one all-reduce over `replicas` devices, `per_node` of them on each machine, as
/// allreduce_schedule lays them out: ring 2N(N-1); tree 4(N-1) per chunk, at most kMaxTreeChunks
/// (nccl_trees.h) chunks; halving-doubling 2N log2 N;
/// hierarchical 2N(L-1) + 2N(M-1) for M machines of L devices; host halving-doubling M(2L(L-1) +
/// 2(L-1) + 2) + 2M log2 M; per-phase fidelity: ring N, tree 8(N-1), hierarchical 3N, host halving-doubling
/// M(2L + 2(L-1) + 2) + 2M log2 M. Auto picks per bucket: the fewest. NCCL's channels
/// (ring_channels_of, hierarchical_channels) multiply `ring` by `ring_channels` and
/// hierarchical by `node_channels`; NCCL 1.x's ring in rank order is one ring.
inline double allreduce_transfers(std::optional<CollectiveAlgorithm> algorithm, double replicas, double per_node,
                                  CollectiveFidelity fidelity = CollectiveFidelity::kPerRound,
                                  double ring_channels = 1, double node_channels = 1) {
  const double n = replicas;
  const double per_machine = std::clamp(per_node, 1.0, n);
  const bool per_phase = fidelity == CollectiveFidelity::kPerPhase;
  const double one_ring = per_phase ? n : 2 * n * (n - 1);
  const double ring = ring_channels * one_ring;
  const double tree = per_phase ? 8 * (n - 1) : 4 * (n - 1) * static_cast<double>(kMaxTreeChunks);
  const double halving_doubling = 2 * n * std::ceil(std::log2(n));
  const double hierarchical =
      node_channels * (per_phase ? 3 * n : 2 * n * (per_machine - 1) + 2 * n * (n / per_machine - 1));
  const double machines = n / per_machine;
  const double host_halving_doubling =
      machines * ((per_phase ? 2 * per_machine : 2 * per_machine * (per_machine - 1)) + 2 * (per_machine - 1) + 2) +
      2 * machines * std::ceil(std::log2(std::max(machines, 1.0)));
  if (!algorithm) return std::min({ring, tree, halving_doubling, hierarchical});
  switch (*algorithm) {
    case CollectiveAlgorithm::kRing: return ring;
    case CollectiveAlgorithm::kRingInRankOrder: return one_ring;
    case CollectiveAlgorithm::kDoubleBinaryTree: return tree;
    case CollectiveAlgorithm::kHalvingDoubling: return halving_doubling;
    case CollectiveAlgorithm::kHierarchical: return hierarchical;
    case CollectiveAlgorithm::kHostHalvingDoubling: return host_halving_doubling;
    case CollectiveAlgorithm::kPairwise: break;  // all-to-all only: never an all-reduce's
  }
  return ring;
}

/// Tasks of a plan: about 3 per op (forward, backward, and an update or a transfer) in every
/// replica and step, plus every step's all-reduce transfers.
inline double estimate_plan_tasks(double ops, double replicas, double steps, double allreduce_transfers_per_step) {
  return steps * (ops * replicas * 3 + allreduce_transfers_per_step);
}

/// This machine's physical memory in bytes; 0 when the system does not say.
inline double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_bytes > 0 ? static_cast<double>(pages) * static_cast<double>(page_bytes) : 0;
}

}  // namespace placesim
