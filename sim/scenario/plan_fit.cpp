#include "sim/scenario/plan_fit.h"

#include <algorithm>
#include <cmath>

#include "sim/cluster/cluster_builder.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/plan_size.h"

namespace placesim {
namespace {

// What a strategy's plan multiplies the model by (plan_size.h): step copies ("replicas": data-parallel
// replicas, micro-batches, or 3D replicas x tensor ranks x micro-batches) and all-reduce transfers.
struct PlanFactors {
  double replicas = 1;
  double allreduce = 0;   ///< transfers per step
  const char* key = "";   ///< the strategy's key that sets the replicas: data_parallel, pipeline, parallelism
};

/// How many gradient all-reduces a step has, about: the gradients over the bucket size, or one per
/// op with weights (kOneBucketPerOp).
double gradient_buckets(const OpGraph& graph, double bucket_bytes) {
  double bytes = 0, ops = 0;
  for (OpId v = 0; v < graph.size(); ++v) {
    bytes += graph.op(v).parameter_bytes();
    ops += graph.op(v).parameter_count > 0 ? 1 : 0;
  }
  if (bucket_bytes == kOneBucketPerOp) return std::max(1.0, ops);
  return std::max(1.0, std::ceil(bytes / bucket_bytes));
}

// The refusal of a plan that would not fit in this machine, blaming its largest factor: the steps,
// else the replicas, else the model.
std::optional<PlanTooLarge> refusal(const OpGraph& graph, const RunOptions& run, const PlanFactors& factors) {
  const double steps = static_cast<double>(run.steps);
  const double memory_bytes = physical_memory_bytes();
  const double tasks = estimate_plan_tasks(static_cast<double>(graph.size()), factors.replicas, steps, factors.allreduce);
  const double bytes = tasks * kHostBytesPerTask;
  if (tasks <= kMaxPlanTasks && (memory_bytes == 0 || bytes <= memory_bytes)) return std::nullopt;
  const std::string key = factors.key;
  auto gigabytes = [](double b) { return std::to_string(static_cast<long long>(std::ceil(b / 1e9))) + " GB"; };
  PlanTooLarge result;
  result.key = key;
  result.message = "the plan would need about " + gigabytes(bytes) + " / " + std::to_string(static_cast<long long>(tasks)) +
                   " tasks (" + std::to_string(graph.size()) + " ops x " +
                   std::to_string(static_cast<long long>(factors.replicas)) +
                   (key == "pipeline" ? " micro-batches x " : " replicas x ") + std::to_string(run.steps) + " steps x ~3" +
                   (factors.allreduce > 0 ? ", plus all-reduce transfers" : "") + "); the limit is " +
                   std::to_string(static_cast<long long>(kMaxPlanTasks)) + " tasks" +
                   (memory_bytes > 0 ? " and this machine's " + gigabytes(memory_bytes) + " of memory" : "");
  result.blame = steps > 1 && steps >= factors.replicas ? PlanTooLarge::kSteps
                 : factors.replicas > 1                 ? PlanTooLarge::kReplicas
                                                        : PlanTooLarge::kModel;
  return result;
}

}  // namespace

std::optional<PlanTooLarge> plan_too_large(const Scenario& scenario, const Strategy& strategy) {
  const Cluster& cluster = scenario.cluster_for(strategy);
  PlanFactors factors;
  if (const auto& dp = strategy.data_parallel) {
    factors.key = "data_parallel";
    factors.replicas = static_cast<double>(dp->replicas.size());
    if (dp->aggregation == Aggregation::kAllReduce && dp->replicas.size() > 1) {
      const int node = cluster.device(dp->replicas.front()).node;
      double per_node = 0;
      for (DeviceId id : dp->replicas) per_node += cluster.device(id).node == node ? 1 : 0;
      const double buckets = gradient_buckets(scenario.graph, dp->bucket_bytes);
      // NCCL's rings at once, of the algorithms this strategy may run (auto: any).
      auto may_run = [&](CollectiveAlgorithm algorithm) { return !dp->algorithm || *dp->algorithm == algorithm; };
      const double ring_channels =
          may_run(CollectiveAlgorithm::kRing)
              ? static_cast<double>(ring_channels_of(CollectiveAlgorithm::kRing, dp->replicas, cluster).size())
              : 1.0;
      const double node_channels =
          may_run(CollectiveAlgorithm::kHierarchical)
              ? static_cast<double>(hierarchical_channels(dp->replicas, cluster).size())
              : 1.0;
      factors.allreduce = buckets * allreduce_transfers(dp->algorithm, factors.replicas, per_node,
                                                        scenario.run.collective_fidelity, ring_channels, node_channels);
    }
  }
  if (const auto& pp = strategy.pipeline) {  // a step copy per micro-batch
    factors.key = "pipeline";
    factors.replicas = static_cast<double>(pp->micro_batches);
  }
  if (const auto& p = strategy.parallelism) {  // a step copy per replica, tensor rank and micro-batch
    factors.key = "parallelism";
    factors.replicas = static_cast<double>((scenario.run.symmetry ? 1 : p->data * p->tensor) * p->micro_batches);
    // The closed-form tier plans one micro-batch of representatives, once.
    if (scenario.run.tier == Tier::kClosedForm) factors.replicas = 1;
  }
  return refusal(scenario.graph, scenario.run, factors);
}

std::optional<PlanTooLarge> plan_too_large_before_cluster(const OpGraph& graph, const RunOptions& run, double replicas,
                                                          bool all_reduce, std::optional<CollectiveAlgorithm> algorithm,
                                                          double bucket_bytes) {
  if (replicas > static_cast<double>(kMaxClusterDevices)) return std::nullopt;
  PlanFactors factors;
  factors.key = "data_parallel";
  factors.replicas = replicas;
  if (all_reduce && replicas > 1) {
    const double buckets = gradient_buckets(graph, bucket_bytes);
    factors.allreduce = buckets * allreduce_transfers(algorithm, replicas, std::sqrt(replicas), run.collective_fidelity);
  }
  return refusal(graph, run, factors);
}

}  // namespace placesim
