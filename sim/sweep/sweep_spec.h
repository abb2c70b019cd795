// A scenario's `sweep` section as typed data (docs/capacity-planning.md; read by the scenario
// loader, sim/scenario/sweep_reader.h): the dimensions to vary (node type, devices per node,
// nodes, fabric, strategy variants, per-device batch, precision), the constraints (target,
// budget), prices and fidelity; and its expansion into an ordered list of configurations, each of
// which the loader turns into a typed scenario (sim/scenario/scenario_variations.h). Pure: the
// same file always gives the same configurations in the same order (index i is stable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/json_reader.h"
#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"
#include "sim/spec/tier.h"
#include "sim/sweep/price_list.h"

namespace placesim {


/// One strategy of the sweep with its lists expanded: a scenario "strategy" object without the
/// devices, which each configuration fills in.
struct StrategyVariant {
  std::string label;  ///< "all-reduce algorithm=ring", unique in the sweep
  std::string kind;   ///< "data_parallel" | "pipeline" | "parallelism" (3D: tensor x pipeline x data)
  Json strategy;      ///< {"data_parallel": {...}}, {"pipeline": {...}} or {"parallelism": {...}}
  std::string json_path;  ///< of the kind's object in the scenario file ("/sweep/strategies/0/parallelism")
  /// The JSON path of each option whose value came from a list ("/sweep/strategies/0/parallelism/tensor/1").
  std::map<std::string, std::string> option_paths;
  /// A 3D variant's "micro_batch_size" (samples per micro-batch; not a scenario option, so not
  /// in `strategy`): micro-batches = per-replica batch / this, unless "micro_batches" is given.
  int64_t micro_batch_size = 1;
  bool sets_micro_batches = false;  ///< a 3D variant gives "micro_batches" (else: from micro_batch_size)
  bool sets_algorithm = false;      ///< a 3D variant gives "algorithm" (else: the ring)
};

/// A node type: a cluster template and the accelerators of one of its nodes.
struct NodeType {
  std::string template_id;
  std::string device_id;                  ///< profile of its accelerators
  std::vector<std::string> accelerators;  ///< local names, in node order ("GPU:0", ...)
  bool has_fabric = false;                ///< the template names a fabric
  int64_t node_devices = 0;               ///< every device of one node, CPUs included
};

struct SweepConfiguration {
  size_t index = 0;
  size_t node_type = 0;  ///< into SweepSpec::node_types
  int64_t devices_per_node = 1;
  int64_t nodes = 1;
  std::string fabric;  ///< link type; "" = the template's (or one node)
  size_t strategy = 0;  ///< into SweepSpec::strategies
  int64_t batch_size = 1;  ///< per replica (the whole step's batch for a pipeline or a 3D strategy)
  std::string precision;
  int64_t devices() const { return devices_per_node * nodes; }
};

struct SweepTarget {
  std::string metric;  ///< "samples_per_second" | "tokens_per_second" | "time_to_train_seconds"
  double value = 0;
};

struct SweepSpec;
/// The sweep's "fidelity" as written: "analytical", "simulated", "analytical+recheck N" or
/// "search N".
std::string fidelity_name(const SweepSpec& spec);

struct SweepSpec {
  std::vector<NodeType> node_types;
  std::vector<StrategyVariant> strategies;
  std::vector<SweepConfiguration> configurations;
  std::optional<SweepTarget> target;
  std::optional<double> budget_usd_per_hour;
  std::optional<double> budget_usd_to_train;
  double train_samples = 1e6;     ///< samples of the training run that time and cost to train refer to
  double tokens_per_sample = 0;   ///< 0 = unknown (no tokens/s)
  Tier tier = Tier::kAnalytical;  ///< "fidelity": the tier every configuration is evaluated on
  size_t recheck = 0;  ///< "analytical+recheck N": the best N of the analytical pass re-simulated
  /// "search N": the 3D configurations the search tier covers are screened, and the best N of
  /// the screen (with every configuration it does not cover) evaluated on the analytical tier.
  size_t search = 0;
  PriceList prices;
  Json fingerprint_source;  ///< what the evaluations depend on (for the resume file)
};

/// What a sweep multiplies out besides node types and strategies: every value of each
/// dimension, in the file's order (empty devices_per_node: each node type's accelerators).
struct SweepDimensions {
  std::vector<int64_t> devices_per_node;
  std::vector<int64_t> node_counts;
  std::vector<std::string> fabrics;  ///< "" = the template's
  std::vector<int64_t> batches;
  std::vector<std::string> precisions;
};

/// How many configurations expand_configurations gives, without building them.
size_t configuration_count(const SweepSpec& spec, const SweepDimensions& dimensions);

/// The configurations in a fixed order, node type slowest ... precision fastest. A single node
/// has no fabric, so it is listed once whatever the fabrics; devices per node above what a node
/// has are left out.
std::vector<SweepConfiguration> expand_configurations(const SweepSpec& spec, const SweepDimensions& dimensions);

/// The devices of a configuration's strategy, by name, in its order: the first devices_per_node
/// accelerators of each node, node by node ("/task:1/device:GPU:0").
std::vector<std::string> configuration_devices(const SweepSpec& spec, const SweepConfiguration& configuration);

/// What a configuration decides of a 3D variant (`options` read from its "parallelism", `run` the
/// scenario's with the configuration's batch): data = devices / (tensor x pipeline); the sweep's
/// batch is the step's (global) batch, so each replica takes batch / data, in micro-batches of
/// micro_batch_size samples (default 1) unless micro_batches is given; the all-reduces default to
/// the ring (the closed-form tier needs it); unless the scenario says how to simulate
/// (`scenario_sets_simulation`), large plans are simulated on representatives. InputError at
/// /sweep/strategies or /sweep/batch_size when the configuration cannot hold the layout.
void size_parallelism(const StrategyVariant& variant, const SweepConfiguration& configuration,
                      bool scenario_sets_simulation, ParallelismOptions* options, RunOptions* run);

/// "8 x V100-SXM2-16GB (dgx1_v100, 1 node x 8), all-reduce, batch 64, fp16"
std::string describe(const SweepSpec& spec, const SweepConfiguration& configuration);

/// 64-bit FNV-1a of a text, as 16 hex digits (stable across builds, unlike std::hash).
std::string fingerprint(const std::string& text);

}  // namespace placesim
