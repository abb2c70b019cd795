// CollectiveAlgorithm: how an all-reduce is decomposed into point-to-point transfers.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

enum class CollectiveAlgorithm {
  kRing,              ///< reduce-scatter then all-gather around a ring (NCCL ring)
  kDoubleBinaryTree,  ///< two complementary binary trees, each reducing then broadcasting half
  kHalvingDoubling,   ///< recursive halving reduce-scatter, recursive doubling all-gather
  kHierarchical,      ///< reduce-scatter inside each node, all-reduce across nodes, all-gather inside
};

std::string to_string(CollectiveAlgorithm algorithm);  ///< "ring", "tree", "halving_doubling", "hierarchical"
std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& text);
std::vector<std::string> collective_algorithm_names();

}  // namespace placesim
