// Reads a scenario's "strategy" / "strategies" (placement rules, data, pipeline and 3D
// parallelism), resolving device names against the cluster; and a strategy without its devices
// (a sweep's variant), placed on devices later. Part of the scenario loader: the only code that reads scenario JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/strategy_devices.h"

namespace placesim {

/// Builds a cluster from a "cluster" object (the scenario loader's cluster builder).
using ClusterReader = std::function<Cluster(const JsonReader&)>;

/// The strategies of a scenario document (at least one), and where each was written (by name).
/// A top-level "published" block belongs to the single "strategy" form; a strategy may bring its
/// own "cluster" (read with `read_cluster`).
std::vector<Strategy> read_strategies(const JsonReader& document, const Cluster& cluster,
                                      const ClusterReader& read_cluster, std::map<std::string, StrategySource>* sources);

/// A pipeline has at most this many stages.
inline constexpr int64_t kMaxPipelineStages = 4096;

/// A strategy read without its devices: a sweep's variant, whose devices each configuration
/// sets (sim/scenario/scenario_variations.h). Its options are read and checked once; what
/// depends on the devices is checked by place_strategy.
struct UnplacedStrategy {
  Strategy strategy;              ///< one of data_parallel, pipeline, parallelism; no devices
  int64_t parameter_servers = 1;  ///< data parallel with parameter servers: how many, on the CPUs
  bool hybrid_sharding = false;   ///< parallelism with "fsdp": "hybrid"
  std::string kind;  ///< "data_parallel", "pipeline" or "parallelism": its options' key in the strategy
  std::string file;
  StrategySource source;  ///< where the strategy was written (its object, the values from lists)
};

/// `body`: the "data_parallel", "pipeline" or "parallelism" object (`kind`) of the strategy
/// object at `strategy_path`, without the keys that name devices ("replicas", "ps_devices",
/// "stages", "devices") or the data size.
UnplacedStrategy read_unplaced_strategy(const std::string& name, const std::string& kind, const JsonReader& body,
                                        const std::string& strategy_path);

/// The strategy on `devices` (the replicas; the stages in order; the 3D layout's devices, whose
/// sizes the caller has set), checked as the loader checks devices named in a file: an
/// InputError names the option's JSON path.
Strategy place_strategy(const UnplacedStrategy& unplaced, const std::vector<DeviceId>& devices, const Cluster& cluster);

/// The error place_strategy gives for `problem` with `unplaced`'s options: the file, and the JSON
/// path of the option at fault (its value in a sweep's list, else its key in the strategy).
InputError option_error(const UnplacedStrategy& unplaced, const OptionProblem& problem);

/// Fails at `object`'s key the problem names (at `object` itself when it has no such key).
void fail_on_problem(const JsonReader& object, const MaybeProblem& problem);

/// A strategy's "framework" and "transport" (sim/spec/framework.h): which transports its
/// messages and collectives take. Parameter-server aggregation needs a framework that has them.
CommunicationOptions read_communication(const JsonReader& reader, Aggregation aggregation);

/// A gradient bucket's size, `reader`'s "bucket_bytes" else `fallback`: at least one byte (a
/// smaller bucket would be a bucket per fraction of a byte) and at most kMaxPlausibleBytes.
double bucket_bytes_or(const JsonReader& reader, double fallback);

}  // namespace placesim
