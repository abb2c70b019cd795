// Reads a strategy's "parallelism" block (data x tensor x pipeline, docs/tensor-parallel.md) and
// checks what can be checked without the model graph: the sizes, the devices and that every
// tensor-parallel group stays inside one machine. Part of the scenario loader.
#pragma once

#include <cstdint>

#include "sim/core/json_reader.h"
#include "sim/scenario/strategy_devices.h"
#include "sim/spec/strategy.h"

namespace placesim {

/// Tensor, pipeline and data sizes and micro-batches: at most this many each.
inline constexpr int64_t kMaxParallelismSize = 65536;

/// A "parallelism" block's options without its devices (what a sweep's variant holds).
struct ParallelismFields {
  ParallelismOptions options;    ///< devices empty
  bool hybrid_sharding = false;  ///< "fsdp": "hybrid": the shard group is found from the devices
};
ParallelismFields read_parallelism_fields(const JsonReader& reader);

/// A sized layout's data width or micro-batches above kMaxParallelismSize (a sweep sizes them).
MaybeProblem sized_parallelism_problem(const ParallelismOptions& options);

/// With `fields->options.devices` set: what depends on them (strategy_devices.h); sets the
/// hybrid shard group.
MaybeProblem check_parallelism_devices(ParallelismFields* fields, const Cluster& cluster, bool devices_listed);

ParallelismOptions read_parallelism(const JsonReader& reader, const Cluster& cluster);

}  // namespace placesim
