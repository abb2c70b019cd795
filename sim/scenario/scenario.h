// Scenario: one fully loaded and validated input — the model graph, the cluster, the strategy
// and the run options — as typed objects. Only the scenario loader reads scenario JSON; every
// later stage takes these types.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/convergence_options.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct Scenario {
  std::string name;
  std::string description;
  std::filesystem::path file;
  OpGraph graph;
  Cluster cluster;
  RunOptions run;
  std::vector<Strategy> strategies;  ///< at least one

  /// The cluster a strategy runs on: its own, else the scenario's.
  const Cluster& cluster_for(const Strategy& strategy) const { return strategy.cluster ? *strategy.cluster : cluster; }
  std::string trace_path;   ///< from "outputs", "" = none
  std::string report_path;  ///< from "outputs", "" = none
  /// The "convergence" block (`placesim converge`, docs/convergence.md); absent = defaults.
  std::optional<ConvergenceOptions> convergence;
};

}  // namespace placesim
