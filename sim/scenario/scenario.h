// Scenario: one fully loaded and validated input — the model graph, the cluster, the strategy
// and the run options — as typed objects. Only the scenario loader reads scenario JSON; every
// later stage takes these types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/precision.h"
#include "sim/graph/op_graph.h"

namespace placesim {

/// A tf.device-like rule: ops whose name matches `ops` (a glob: * and ?) go to `device`.
struct PlacementRule {
  std::string ops;
  std::string device;
  std::string json_path;  ///< where the rule came from, for error messages
};

struct PlacementOptions {
  std::vector<PlacementRule> rules;  ///< first matching rule wins
  bool allow_soft_placement = false;
  /// Where the graph's ops array is, for errors about an op's own "device": the model file
  /// ("" = the scenario file) and the JSON pointer of the array in it.
  std::string graph_file;
  std::string graph_ops_path = "/model/ops";
};

enum class StepKind { kTraining, kInference };

enum class Optimizer { kSgd, kMomentum, kAdam };
std::string to_string(Optimizer optimizer);

struct RunOptions {
  StepKind kind = StepKind::kTraining;
  int64_t steps = 1;
  int64_t batch_size = 1;
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;
  Optimizer optimizer = Optimizer::kSgd;
  std::vector<std::string> fetch;  ///< ops to evaluate; empty = the whole graph
  bool log_device_placement = false;
};

/// A figure measured elsewhere that this scenario's prediction is checked against.
struct PublishedFigure {
  std::string metric;  ///< "step_time_seconds" | "samples_per_second"
  double value = 0;
  std::string source;
};

struct Scenario {
  std::string name;
  std::string description;
  std::filesystem::path file;
  OpGraph graph;
  Cluster cluster;
  PlacementOptions placement;
  RunOptions run;
  std::optional<PublishedFigure> published;
  std::string trace_path;   ///< from "outputs", "" = none
  std::string report_path;  ///< from "outputs", "" = none
};

}  // namespace placesim
