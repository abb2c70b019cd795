// Data-parallel plans: the whole graph replicated on every replica device, each on its own
// batch of `run.batch_size` samples, with gradients combined by
//  - sync all-reduce: gradients grouped into buckets in the order backward produces them; each
//    bucket's all-reduce (a collective task) starts when every replica has produced it (or after
//    the whole backward without overlap), then every replica applies the update;
//  - sync parameter servers: variables sharded over the servers; every worker pushes each
//    gradient to its server, the server averages the N gradients and updates once, every
//    worker pulls the new value before its next forward; the step waits for the slowest;
//  - async parameter servers: each worker pulls, computes, pushes; the server applies each
//    gradient as it arrives; workers never wait for each other.
#pragma once

#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// `notes` receives what was decided (algorithms picked, variable sharding).
ExecutionPlan build_data_parallel_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                       const DataParallelOptions& options, const std::string& name,
                                       std::vector<std::string>* notes);

/// Which parameter server holds each op's variables (by OpId; ops without parameters get 0):
/// round robin in op order, or greedy by size onto the least loaded server.
std::vector<size_t> shard_variables(const OpGraph& graph, size_t servers, Sharding sharding);

}  // namespace placesim
