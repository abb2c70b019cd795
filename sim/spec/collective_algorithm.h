// CollectiveAlgorithm: how an all-reduce is decomposed into point-to-point transfers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

enum class CollectiveAlgorithm {
  kRing,              ///< reduce-scatter then all-gather around a ring (NCCL ring)
  kDoubleBinaryTree,  ///< NCCL's trees: machines chained inside, two binary trees across, each half up then down
  kHalvingDoubling,   ///< recursive halving reduce-scatter, recursive doubling all-gather
  kHierarchical,      ///< reduce-scatter inside each node, all-reduce across nodes, all-gather inside
  /// Gloo's CUDA halving-doubling as Caffe2 ran it (Goyal et al. 2017): each node reduces onto its
  /// first device, copies to its host CPU, the hosts run recursive halving-doubling (summing on
  /// the CPUs), copy back, and each node broadcasts. All-reduce only.
  kHostHalvingDoubling,
  /// All-to-all only: every device sends its 1/n of the buffer to every other, n - 1 rounds of
  /// pairwise exchanges (NCCL's all-to-all: grouped sends and receives). Not an all-reduce algorithm.
  kPairwise,
  /// NCCL 1.x's ring (TensorFlow 1.1's contrib NCCL, NVIDIA/nccl 024d1e26 `src/core.cu`,
  /// `orderRanks`: "Order by nvml index"): the group's own order, no topology search; kRing's
  /// ring follows the topology, as NCCL 2.x searches it.
  kRingInRankOrder,
};

std::string to_string(CollectiveAlgorithm algorithm);  ///< "ring", "tree", "halving_doubling", "hierarchical",
                                                       ///< "host_halving_doubling", "pairwise"
std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& text);
/// The all-reduce algorithms a strategy may name (every algorithm but pairwise).
std::vector<std::string> collective_algorithm_names();

/// How finely the engine simulates a ring or hierarchical all-reduce (docs/performance.md).
enum class CollectiveFidelity {
  kPerPhase,  ///< each ring phase as one flow per ring hop carrying all its rounds' bytes, the
              ///< route latency charged once per round: N flows instead of 2N(N-1) (the default)
  kPerRound,  ///< every round of every phase as its own transfer, waiting for the round before
};

std::string to_string(CollectiveFidelity fidelity);  ///< "per-phase", "per-round"
std::optional<CollectiveFidelity> parse_collective_fidelity(const std::string& text);

}  // namespace placesim
