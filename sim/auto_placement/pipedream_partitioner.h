// PipeDream's partitioner (Narayanan et al., SOSP 2019, section 3.1): cuts a model's ops, in
// topological order, into pipeline stages, each on its own number of replicas ("15-1"), so that
// the slowest stage or stage boundary takes the least time per micro-batch stream's batch; by
// dynamic programming over (ops placed, replicas used, stages), as the paper's optimizer does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/graph/op_graph.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// The model as the partitioner sees it: a chain of ops (topological order), each with its
/// compute and its weights' gradient bytes, and where a stage may end.
struct PartitionChain {
  std::vector<double> compute_seconds;  ///< by position: forward + backward of one stream's batch on one replica
  std::vector<double> gradient_bytes;   ///< by position: all-reduced among its stage's replicas
  std::vector<bool> may_end_stage;      ///< by position: a stage may end after it (the last position always)
  /// The boundary after position `after` between a stage on replicas [left_first, left_first +
  /// left_width) and the next on [right_first, right_first + right_width), with `streams`
  /// streams going round robin over each (stream d on replica d mod width): per stream's batch,
  /// the busiest left replica's and the busiest right replica's time sending and receiving the
  /// activations forward and their gradients back.
  std::function<std::pair<double, double>(size_t after, int64_t left_first, int64_t left_width, int64_t right_first,
                                          int64_t right_width, int64_t streams)>
      boundary_seconds;
  /// A ring all-reduce of `bytes` among replicas first .. first + count - 1.
  std::function<double(double bytes, int64_t first, int64_t count)> all_reduce_seconds;
  /// All-reduces per stream's batch on each replica of a stage: one per round of micro-batches.
  int64_t micro_batches = 1;
  /// Every stage must hold some weights (positive gradient_bytes): a stage of reshapes or
  /// pooling alone would update nothing, and `converge` has no updates of it to replay.
  bool every_stage_holds_weights = false;
};

struct PipeDreamPartition {
  std::vector<int64_t> widths;  ///< by stage: its replicas; each divides the widest
  std::vector<size_t> first;    ///< by stage: its first position; stage s runs [first[s], first[s + 1])
  /// By stage, per stream's batch: max(compute, micro_batches x all-reduce) / width, then its
  /// busiest replica's transfers to and from the stages beside it.
  std::vector<double> stage_seconds;
  double seconds = 0;  ///< the slowest stage
};

/// The partition of `chain` over exactly `replicas` replicas (read stage by stage: stage 0's
/// first) into `stages` stages (0: the best of 2 to min(replicas, 8) stages) minimising the
/// slowest stage's time per stream's batch, by dynamic programming as PipeDream's optimizer does:
/// a stage takes max(compute, micro_batches x its replicas' all-reduce of its gradients) / its
/// replicas, as there; unlike there, its busiest replica's transfers to and from the stages
/// beside it are added, not overlapped (a narrow stage receiving every stream's activations waits
/// for them: what the simulated plan shows). Widths are restricted to those dividing the widest
/// (placesim's round robin of streams). Ties go to fewer stages, then to the earlier cut. Throws
/// std::invalid_argument when no partition exists (fewer places to cut than stages, or more
/// stages than replicas).
PipeDreamPartition partition_pipedream(const PartitionChain& chain, int64_t replicas, int64_t stages);

/// The best partition for each number of stages and widest width the search above tries, fastest
/// estimate first (partition_pipedream's is the first): candidates for a simulation to judge.
std::vector<PipeDreamPartition> pipedream_partition_candidates(const PartitionChain& chain, int64_t replicas,
                                                               int64_t stages);

/// The partitions beside `partition` of `chain` over `replicas`: the same widths, one stage
/// boundary moved by 1 to `places` of the places where a stage may end, either way (every stage
/// keeping at least one position, and some weights when the chain asks for them), each timed as
/// the search above times a partition, fastest estimate first. For a search around its answer
/// that a simulation judges.
std::vector<PipeDreamPartition> neighbouring_pipedream_partitions(const PartitionChain& chain, int64_t replicas,
                                                                  const PipeDreamPartition& partition, size_t places);

/// What `"stage_replicas": "auto"` chooses from: the partitions of `graph`'s ops over `options`'
/// devices (one replica each: tensor 1), costs from the cost model on each device and the
/// cluster's routes (PlacementProblem), and each stage's ops by name. Throws SpecError at the
/// strategy's parallelism when the graph cannot be split so.
struct AutomaticStages {
  PipeDreamPartition partition;
  std::vector<std::vector<std::string>> stage_ops;  ///< by stage: its ops' names
};
struct AutomaticStagesSearch {
  /// Every candidate (pipedream_partition_candidates), fastest estimate first.
  std::vector<AutomaticStages> candidates;
  /// The partitions beside one of them within a number of places (neighbouring_pipedream_partitions),
  /// named as they are. Valid while the cluster given to automatic_pipedream_stages is.
  std::function<std::vector<AutomaticStages>(const AutomaticStages&, size_t places)> neighbours;
};
AutomaticStagesSearch automatic_pipedream_stages(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                                 const ParallelismOptions& options);

}  // namespace placesim
