#include "sim/auto_placement/auto_placer.h"

namespace placesim {

std::string to_string(PlacementAlgorithm algorithm) {
  switch (algorithm) {
    case PlacementAlgorithm::kExpert: return "expert";
    case PlacementAlgorithm::kMTopo: return "m-topo";
    case PlacementAlgorithm::kMEtf: return "m-etf";
    case PlacementAlgorithm::kMSct: return "m-sct";
  }
  return "?";
}

std::vector<PlacementAlgorithm> all_placement_algorithms() {
  return {PlacementAlgorithm::kExpert, PlacementAlgorithm::kMTopo, PlacementAlgorithm::kMEtf, PlacementAlgorithm::kMSct};
}

AutoPlacement auto_place(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                         const AutoPlacementOptions& options) {
  PlacementProblem problem = make_placement_problem(graph, cluster, run, options);
  AutoPlacement result;
  switch (options.algorithm) {
    case PlacementAlgorithm::kExpert: result = place_expert(problem); break;
    case PlacementAlgorithm::kMTopo: result = place_m_topo(problem); break;
    case PlacementAlgorithm::kMEtf: result = place_m_etf(problem); break;
    case PlacementAlgorithm::kMSct: result = place_m_sct(problem); break;
  }
  return result;
}

}  // namespace placesim
