#include "sim/spec/collective_algorithm.h"

#include <array>
#include <utility>

namespace placesim {
namespace {
constexpr std::array<std::pair<CollectiveAlgorithm, const char*>, 7> kNames{{
    {CollectiveAlgorithm::kRing, "ring"},
    {CollectiveAlgorithm::kDoubleBinaryTree, "tree"},
    {CollectiveAlgorithm::kHalvingDoubling, "halving_doubling"},
    {CollectiveAlgorithm::kHierarchical, "hierarchical"},
    {CollectiveAlgorithm::kHostHalvingDoubling, "host_halving_doubling"},
    {CollectiveAlgorithm::kPairwise, "pairwise"},
    {CollectiveAlgorithm::kRingInRankOrder, "ring_rank_order"},
}};
}  // namespace

std::string to_string(CollectiveAlgorithm algorithm) {
  for (const auto& [value, name] : kNames) {
    if (value == algorithm) return name;
  }
  return "ring";
}

std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& text) {
  for (const auto& [value, name] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> collective_algorithm_names() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) {
    if (entry.first != CollectiveAlgorithm::kPairwise) names.emplace_back(entry.second);  // all-reduce algorithms
  }
  return names;
}

std::string to_string(CollectiveFidelity fidelity) {
  return fidelity == CollectiveFidelity::kPerRound ? "per-round" : "per-phase";
}

std::optional<CollectiveFidelity> parse_collective_fidelity(const std::string& text) {
  if (text == "per-phase") return CollectiveFidelity::kPerPhase;
  if (text == "per-round") return CollectiveFidelity::kPerRound;
  return std::nullopt;
}

}  // namespace placesim
