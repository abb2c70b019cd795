// What a strategy's options need from the devices they run on, checked on typed options: the
// all-reduce algorithm fits the replicas, parameter servers find CPUs, pipeline stages have a
// device each, tensor groups stay inside one machine, interleaving and hybrid sharding fit their
// groups. The scenario loader checks devices named in a file with these, and a sweep the devices
// each configuration sets; a problem names the option it comes from, and the caller its JSON path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/spec/strategy.h"

namespace placesim {

/// A strategy option that does not fit its devices: `field` is the key in the strategy's
/// "data_parallel", "pipeline" or "parallelism" object ("" = the object itself).
struct OptionProblem {
  std::string field;
  std::string message;
};
using MaybeProblem = std::optional<OptionProblem>;

/// The cluster's devices of one kind, in device order.
std::vector<DeviceId> devices_of_kind(const Cluster& cluster, DeviceKind kind);

/// The cluster's accelerators in device order: its GPUs, else its TPUs (none: empty).
std::vector<DeviceId> cluster_accelerators(const Cluster& cluster);

/// Where replicas and stages go by default: the accelerators, else the CPUs (TensorFlow's
/// benchmarks put one worker per GPU).
std::vector<DeviceId> accelerators_else_cpus(const Cluster& cluster);

/// `count` parameter servers on the cluster's CPUs, server i on CPU i mod CPUs (TensorFlow's PS
/// tasks co-located with the workers, as in its distributed benchmarks).
MaybeProblem default_parameter_servers(int64_t count, const Cluster& cluster, std::vector<DeviceId>* servers);

/// An all-reduce algorithm chosen by name fits the replicas (halving-doubling: a power of two).
MaybeProblem data_parallel_devices_problem(const DataParallelOptions& options, const Cluster& cluster);

/// Every stage on a device of its own.
MaybeProblem pipeline_devices_problem(const PipelineOptions& options, const Cluster& cluster);

/// Tensor groups inside one machine (`devices_listed`: a group spanning machines is the listed
/// devices' problem, else the tensor size's).
MaybeProblem tensor_groups_problem(const ParallelismOptions& options, const Cluster& cluster, bool devices_listed);

/// Interleaved 1F1B's conditions (Megatron-LM's): the 1F1B schedule, more than one stage,
/// micro-batches in groups of `pipeline`.
MaybeProblem virtual_stages_problem(const ParallelismOptions& options);

/// FSDP hybrid sharding: the replicas of (stage 0, rank 0) on the first replica's machine form a
/// shard group, which must divide `data`; sets `shard_group`.
MaybeProblem set_hybrid_shard_group(ParallelismOptions* options, const Cluster& cluster);

}  // namespace placesim
