#include "sim/sweep/sweep_spec.h"

#include <cstdio>

#include "sim/core/input_error.h"

namespace placesim {

std::string fidelity_name(const SweepSpec& spec) {
  if (spec.search > 0) return "search " + std::to_string(spec.search);
  return spec.recheck > 0 ? "analytical+recheck " + std::to_string(spec.recheck) : to_string(spec.tier);
}

std::string fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

size_t configuration_count(const SweepSpec& spec, const SweepDimensions& dimensions) {
  size_t count = 0;
  for (const NodeType& type : spec.node_types) {
    std::vector<int64_t> per_node = dimensions.devices_per_node;
    if (per_node.empty()) per_node = {static_cast<int64_t>(type.accelerators.size())};
    for (int64_t d : per_node) {
      if (d > static_cast<int64_t>(type.accelerators.size())) continue;
      for (int64_t n : dimensions.node_counts) {
        const size_t fabrics = n == 1 ? 1 : dimensions.fabrics.size();
        count += fabrics * spec.strategies.size() * dimensions.batches.size() * dimensions.precisions.size();
      }
    }
  }
  return count;
}

std::vector<SweepConfiguration> expand_configurations(const SweepSpec& spec, const SweepDimensions& dimensions) {
  std::vector<SweepConfiguration> configurations;
  for (size_t t = 0; t < spec.node_types.size(); ++t) {
    const NodeType& type = spec.node_types[t];
    std::vector<int64_t> per_node = dimensions.devices_per_node;
    if (per_node.empty()) per_node = {static_cast<int64_t>(type.accelerators.size())};
    for (int64_t d : per_node) {
      if (d > static_cast<int64_t>(type.accelerators.size())) continue;
      for (int64_t n : dimensions.node_counts) {
        for (size_t f = 0; f < dimensions.fabrics.size(); ++f) {
          if (n == 1 && f > 0) continue;
          for (size_t s = 0; s < spec.strategies.size(); ++s) {
            for (int64_t b : dimensions.batches) {
              for (const std::string& p : dimensions.precisions) {
                SweepConfiguration c;
                c.index = configurations.size();
                c.node_type = t;
                c.devices_per_node = d;
                c.nodes = n;
                c.fabric = n == 1 ? "" : dimensions.fabrics[f];
                c.strategy = s;
                c.batch_size = b;
                c.precision = p;
                configurations.push_back(c);
              }
            }
          }
        }
      }
    }
  }
  return configurations;
}

std::vector<std::string> configuration_devices(const SweepSpec& spec, const SweepConfiguration& configuration) {
  const NodeType& type = spec.node_types[configuration.node_type];
  std::vector<std::string> devices;
  devices.reserve(static_cast<size_t>(configuration.devices()));
  for (int64_t node = 0; node < configuration.nodes; ++node) {
    for (int64_t d = 0; d < configuration.devices_per_node; ++d) {
      devices.push_back("/task:" + std::to_string(node) + "/device:" + type.accelerators[static_cast<size_t>(d)]);
    }
  }
  return devices;
}

void size_parallelism(const StrategyVariant& variant, const SweepConfiguration& configuration,
                      bool scenario_sets_simulation, ParallelismOptions* options, RunOptions* run) {
  const int64_t group = options->tensor * options->context * options->pipeline;
  const int64_t count = configuration.devices();
  const std::string sizes = "tensor " + std::to_string(options->tensor) +
                            (options->context > 1 ? " x context " + std::to_string(options->context) : std::string()) +
                            " x pipeline " + std::to_string(options->pipeline);
  if (count % group != 0) {
    throw InputError("", "/sweep/strategies",
                     std::to_string(count) + " devices are not a multiple of " + sizes + " = " + std::to_string(group));
  }
  const int64_t data = count / group;
  if (configuration.batch_size % data != 0) {
    throw InputError("", "/sweep/batch_size",
                     "a batch of " + std::to_string(configuration.batch_size) + " does not divide into data " +
                         std::to_string(data) + " (" + std::to_string(count) + " devices / " + sizes + ")");
  }
  const int64_t per_replica = configuration.batch_size / data;
  if (!variant.sets_micro_batches) {
    const int64_t size = variant.micro_batch_size;
    if (size < 1 || per_replica % size != 0) {
      throw InputError("", "/sweep/strategies",
                       "a replica's batch of " + std::to_string(per_replica) + " (" + std::to_string(configuration.batch_size) +
                           " / data " + std::to_string(data) + ") is not a multiple of micro_batch_size " +
                           std::to_string(size));
    }
    options->micro_batches = per_replica / size;
  }
  if (!variant.sets_algorithm) options->algorithm = CollectiveAlgorithm::kRing;
  options->data = data;
  run->batch_size = per_replica;
  if (!scenario_sets_simulation) run->symmetry = true;
}

std::string describe(const SweepSpec& spec, const SweepConfiguration& configuration) {
  const NodeType& type = spec.node_types[configuration.node_type];
  std::string text = std::to_string(configuration.devices()) + " x " + type.device_id + " (" + type.template_id + ", " +
                     std::to_string(configuration.nodes) + (configuration.nodes == 1 ? " node" : " nodes") + " x " +
                     std::to_string(configuration.devices_per_node);
  if (!configuration.fabric.empty()) text += ", " + configuration.fabric;
  const StrategyVariant& variant = spec.strategies[configuration.strategy];
  if (variant.kind == "parallelism") {
    const Json& p = variant.strategy.at("parallelism");
    const int64_t group = p.value("tensor", int64_t{1}) * p.value("context", int64_t{1}) * p.value("pipeline", int64_t{1});
    std::string data = configuration.devices() % group == 0 ? " data=" + std::to_string(configuration.devices() / group) : "";
    return text + "), " + variant.label + data + ", global batch " + std::to_string(configuration.batch_size) + ", " +
           configuration.precision;
  }
  if (variant.kind == "data_parallel") {
    return text + "), " + variant.label + ", batch " + std::to_string(configuration.batch_size) + " per replica (global " +
           std::to_string(configuration.batch_size * configuration.devices()) + "), " + configuration.precision;
  }
  return text + "), " + variant.label + ", global batch " + std::to_string(configuration.batch_size) + ", " +
         configuration.precision;
}

}  // namespace placesim
