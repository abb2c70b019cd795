// Automatic placement (docs/placement.md): the entry point that runs one of the algorithms —
// Baechi's memory-constrained m-TOPO, m-ETF and m-SCT (Jeon et al., "Baechi: Fast Device
// Placement of Machine Learning Graphs", SoCC 2020) or the expert contiguous split — on a
// PlacementProblem, and the algorithms themselves (one file each).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/placement/placement.h"
#include "sim/auto_placement/placement_problem.h"

namespace placesim {

/// "expert", "m-topo", "m-etf", "m-sct".
std::string to_string(PlacementAlgorithm algorithm);
/// Every algorithm, in the order `placesim place` compares them.
std::vector<PlacementAlgorithm> all_placement_algorithms();

/// What an algorithm decided: a device per op, and the bytes its memory model reserved per device.
struct AutoPlacement {
  Placement placement;
  std::vector<double> reserved_bytes;  ///< by DeviceId, the MemoryLedger's total
  /// The algorithm's own schedule length (m-ETF, m-SCT: list-scheduling makespan of one forward +
  /// backward, seconds); 0 for algorithms that do not schedule.
  double estimated_seconds = 0;
};

/// Places every op of `graph` with `options.algorithm`. Throws SpecError (at the strategy's
/// "placement/auto", naming the op and the memory it needs) when the
/// algorithm finds no device with room for an op; never returns an over-memory placement.
AutoPlacement auto_place(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                         const AutoPlacementOptions& options);

// The algorithms, on a prepared problem (each in its own file).
AutoPlacement place_expert(const PlacementProblem& problem);  ///< expert_split.cpp
AutoPlacement place_m_topo(const PlacementProblem& problem);  ///< m_topo.cpp
AutoPlacement place_m_etf(const PlacementProblem& problem);   ///< m_etf.cpp
AutoPlacement place_m_sct(const PlacementProblem& problem);   ///< m_sct.cpp

/// m-SCT's favourite pairs: by OpId, the op whose favourite child it is (m_sct.cpp).
std::vector<std::optional<OpId>> favourite_parents(const PlacementProblem& problem);

}  // namespace placesim
