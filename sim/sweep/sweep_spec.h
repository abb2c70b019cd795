// A scenario's `sweep` section (docs/capacity-planning.md): the dimensions to vary (node type,
// devices per node, nodes, fabric, strategy variants, per-device batch, precision), the
// constraints (target, budget), prices and fidelity; and its expansion into an ordered list of
// configurations, each of which becomes an ordinary scenario document. Pure: the same file
// always gives the same configurations in the same order (index i is stable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/spec/tier.h"
#include "sim/sweep/price_list.h"

namespace placesim {


/// One strategy of the sweep with its lists expanded: a scenario "strategy" object without the
/// devices, which each configuration fills in.
struct StrategyVariant {
  std::string label;  ///< "all-reduce algorithm=ring", unique in the sweep
  std::string kind;   ///< "data_parallel" | "pipeline" | "parallelism" (3D: tensor x pipeline x data)
  Json strategy;      ///< {"data_parallel": {...}}, {"pipeline": {...}} or {"parallelism": {...}}
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
/// The sweep's "fidelity" as written: "analytical", "simulated" or "analytical+recheck N".
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
  PriceList prices;
  Json fingerprint_source;  ///< what the evaluations depend on (for the resume file)
};

/// Reads `document`'s "sweep" (the whole scenario document is needed for its defaults: the
/// cluster template, run.batch_size, run.precision, the gpt zoo's sequence). Throws InputError
/// with the JSON path of the first problem.
SweepSpec read_sweep_spec(const JsonReader& document, const HardwareCatalog& catalog);

/// The scenario document of one configuration: `document` without "sweep", "strategies",
/// "outputs" and "published", with its cluster, strategy, batch size and precision set.
Json configuration_scenario(const Json& document, const SweepSpec& spec, const SweepConfiguration& configuration);

/// "8 x V100-SXM2-16GB (dgx1_v100, 1 node x 8), all-reduce, batch 64, fp16"
std::string describe(const SweepSpec& spec, const SweepConfiguration& configuration);

/// 64-bit FNV-1a of a text, as 16 hex digits (stable across builds, unlike std::hash).
std::string fingerprint(const std::string& text);

}  // namespace placesim
