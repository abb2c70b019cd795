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
#include "sim/convergence/convergence_options.h"
#include "sim/core/precision.h"
#include "sim/graph/op_graph.h"
#include "sim/plan/collective_algorithm.h"
#include "sim/scenario/strategy.h"

namespace placesim {

enum class StepKind { kTraining, kInference };

enum class Optimizer { kSgd, kMomentum, kAdam };
std::string to_string(Optimizer optimizer);

/// From "simulation": {"tier": ...}: what computes the step (docs/scenario-format.md#simulation).
enum class SimulationTier {
  kSimulated,   ///< the SimGrid engine, contention included
  kAnalytical,  ///< the plan list-scheduled without contention (sim/analytical/analytical_engine.h)
  kClosedForm,  ///< 3D strategies: one micro-batch's cells, no plan of the step (pipeline_closed_form.h)
};

struct RunOptions {
  StepKind kind = StepKind::kTraining;
  int64_t steps = 1;
  int64_t batch_size = 1;
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;
  Optimizer optimizer = Optimizer::kSgd;
  std::vector<std::string> fetch;  ///< ops to evaluate; empty = the whole graph
  double jitter_sigma = 0;  ///< per-step, per-device log-normal slowdown (sigma of the log), seeded
  bool log_device_placement = false;
  /// Activation recomputation: forward activations are freed after forward and each op's
  /// forward runs again inside its backward (Chen et al. 2016, "Training Deep Nets with
  /// Sublinear Memory Cost"), trading compute for memory.
  bool recompute = false;
  /// From the scenario's "simulation" block: how finely the engine runs all-reduces.
  CollectiveFidelity collective_fidelity = CollectiveFidelity::kPerPhase;
  /// From "simulation": {"symmetry": "representatives"}: 3D-parallel plans simulate one tensor
  /// rank of one data replica per pipeline stage (sim/plan/plan_symmetry.h).
  bool symmetry = false;
  SimulationTier tier = SimulationTier::kSimulated;
};

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
