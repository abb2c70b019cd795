// Symmetry of a 3D plan: when one tensor rank of one replica per stage may stand for all
// (identical devices, no jitter), what refuses it, and the plan's description of who mirrors whom.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// What needs identical replicas: symmetry, or the closed-form tier's cell plan (`cells`).
struct SymmetricMode {
  std::string option;     ///< the run option that chose it ("simulation/symmetry")
  std::string what;       ///< for messages: "symmetry"
  std::string otherwise;  ///< what to set instead
};

SymmetricMode symmetric_mode(bool cells);

/// Symmetry holds only between devices of one kind at one speed, without per-device jitter;
/// throws SpecError at mode.option otherwise.
void require_symmetric_devices(const Cluster& cluster, const RunOptions& run, const ParallelismOptions& options,
                               const SymmetricMode& mode);

/// Fills plan->symmetry: every device repeats the stage's (replica 0, rank 0) device; the flows
/// the plan simulates (pipeline transfers, one hop of each tensor and data-parallel ring) with
/// their mirrors, whose routes must look the same, give the links' bandwidth divisors.
/// `tied_stages` holds (owner's stage, reader's stage) of each tied weight.
void describe_symmetry(const Cluster& cluster, const ParallelismOptions& options,
                       const std::vector<std::pair<int64_t, int64_t>>& tied_stages, ExecutionPlan* plan,
                       std::vector<std::string>* notes);

}  // namespace placesim
