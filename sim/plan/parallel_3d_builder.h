// Data x tensor x pipeline ("3D") parallel plans (docs/tensor-parallel.md): `data` replicas of a
// pipeline of `pipeline` stages (split and scheduled as in pipeline_builder.h), each stage's ops
// run by a tensor-parallel group of `tensor` devices in the Megatron style (tensor_parallel.h):
// every rank computes 1/t of the split ops, the group all-reduces each row-parallel output in
// forward and each column-parallel input gradient in backward (2 + 2 per transformer layer).
// After the last micro-batch, each (stage, rank)'s gradients are all-reduced in buckets across
// the data-parallel replicas, then every device updates its shard once. A forward task holds
// the activations its op's backward reads (Korthikanti et al. 2022) until that backward.
#pragma once

#include <string>
#include <vector>

#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// `notes` receives the split and which devices form which tensor, pipeline and data-parallel
/// group. Throws InputError (at options.json_path) when the tensor size does not divide an
/// attention op's heads, a stage gets no op, or a given algorithm cannot run on a group.
ExecutionPlan build_parallel_3d_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                     const ParallelismOptions& options, const std::string& name,
                                     std::vector<std::string>* notes);

}  // namespace placesim
