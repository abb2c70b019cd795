// Whether a strategy's plan would fit in this machine (sim/plan/plan_size.h), decided before any
// plan is built: a refusal names what to reduce (the steps, else the strategy's replicas or
// micro-batches, else the model), and the loader maps that to a JSON path.
#pragma once

#include <optional>
#include <string>

#include "sim/scenario/scenario.h"

namespace placesim {

struct PlanTooLarge {
  enum Blame { kSteps, kReplicas, kModel };
  Blame blame = kModel;
  std::string key;  ///< the strategy's key that sets the replicas: "data_parallel", "pipeline", "parallelism"
  std::string message;
};

/// `strategy` (of `scenario`, on its cluster) planned with the scenario's graph and run options.
std::optional<PlanTooLarge> plan_too_large(const Scenario& scenario, const Strategy& strategy);

/// The same for a data-parallel strategy of `replicas` before its cluster is built: 800,000
/// replicas on 100,000 DGX H100 were refused only after building the 1,000,000-device cluster
/// (1.8 GB, 7.5 s). Without the cluster, how many replicas share a machine is unknown; machines
/// of sqrt(N) replicas minimise the hierarchical all-reduce (2N(L - 1) + 2N(N/L - 1) >=
/// 2N(2 sqrt(N) - 2)), so this is a lower bound of plan_too_large's estimate and refuses nothing
/// that it would accept. More replicas than a cluster may hold: nullopt (the cluster's own limit
/// names that problem).
std::optional<PlanTooLarge> plan_too_large_before_cluster(const OpGraph& graph, const RunOptions& run, double replicas,
                                                          bool all_reduce, std::optional<CollectiveAlgorithm> algorithm,
                                                          double bucket_bytes);

}  // namespace placesim
