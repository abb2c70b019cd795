// Scenario: one fully loaded and validated input — the model graph, the cluster, the strategy
// and the run options — as typed objects. Only the scenario loader reads scenario JSON; every
// later stage takes these types.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/convergence_options.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// Where a strategy was written, for the errors found while planning it (SpecError).
struct StrategySource {
  std::string json_path;  ///< of the strategy's object ("/strategy", "/strategies/1", "/sweep/strategies/0")
  /// An option's JSON path where it is not json_path + "/" + option ("parallelism/tensor" ->
  /// "/sweep/strategies/0/parallelism/tensor/1": a sweep's value from a list).
  std::map<std::string, std::string> option_paths;

  /// The JSON path of `option` ("parallelism/tensor"; "" = the strategy's object).
  std::string path_of(const std::string& option) const {
    if (auto given = option_paths.find(option); given != option_paths.end()) return given->second;
    return option.empty() ? json_path : json_path + "/" + option;
  }
};

struct Scenario {
  std::string name;
  std::string description;
  std::filesystem::path file;
  OpGraph graph;
  Cluster cluster;
  RunOptions run;
  std::vector<Strategy> strategies;  ///< at least one
  std::map<std::string, StrategySource> strategy_sources;  ///< by strategy name
  /// Where the graph's ops array is, for errors about an op's own "device": the model file
  /// ("" = the scenario file) and the JSON pointer of the array in it.
  std::string graph_file;
  std::string graph_ops_path = "/model/ops";

  /// The cluster a strategy runs on: its own, else the scenario's.
  const Cluster& cluster_for(const Strategy& strategy) const { return strategy.cluster ? *strategy.cluster : cluster; }
  std::string trace_path;   ///< from "outputs", "" = none
  std::string report_path;  ///< from "outputs", "" = none
  /// The "convergence" block (`placesim converge`, docs/convergence.md); absent = defaults.
  std::optional<ConvergenceOptions> convergence;
};

}  // namespace placesim
