#include "sim/scenario/strategy_devices.h"

#include <unordered_map>

#include "sim/plan/collective_schedule.h"

namespace placesim {
namespace {

/// How many accelerators (on a cluster without any, CPUs) each machine holds, by node number:
/// counted once, so that checking every tensor group of 800,000 GPUs is linear (a scan of the
/// cluster per group took over 10 minutes).
std::unordered_map<int, size_t> accelerators_by_node(const Cluster& cluster) {
  std::unordered_map<int, size_t> counts;
  for (DeviceId id : accelerators_else_cpus(cluster)) ++counts[cluster.device(id).node];
  return counts;
}

}  // namespace

std::vector<DeviceId> devices_of_kind(const Cluster& cluster, DeviceKind kind) {
  std::vector<DeviceId> found;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.device(id).name.kind == kind) found.push_back(id);
  }
  return found;
}

std::vector<DeviceId> cluster_accelerators(const Cluster& cluster) {
  for (DeviceKind kind : {DeviceKind::kGpu, DeviceKind::kTpu}) {
    std::vector<DeviceId> found = devices_of_kind(cluster, kind);
    if (!found.empty()) return found;
  }
  return {};
}

std::vector<DeviceId> accelerators_else_cpus(const Cluster& cluster) {
  std::vector<DeviceId> found = cluster_accelerators(cluster);
  return found.empty() ? devices_of_kind(cluster, DeviceKind::kCpu) : found;
}

MaybeProblem default_parameter_servers(int64_t count, const Cluster& cluster, std::vector<DeviceId>* servers) {
  const std::vector<DeviceId> cpus = devices_of_kind(cluster, DeviceKind::kCpu);
  if (cpus.empty()) return OptionProblem{"", "parameter servers default to CPUs, and the cluster has none: give \"ps_devices\""};
  servers->clear();
  for (int64_t i = 0; i < count; ++i) servers->push_back(cpus[static_cast<size_t>(i) % cpus.size()]);
  return std::nullopt;
}

MaybeProblem data_parallel_devices_problem(const DataParallelOptions& options, const Cluster& cluster) {
  if (options.aggregation != Aggregation::kAllReduce || !options.algorithm) return std::nullopt;
  std::string why;
  if (!applicable(*options.algorithm, options.replicas, cluster, &why)) return OptionProblem{"algorithm", why};
  return std::nullopt;
}

MaybeProblem pipeline_devices_problem(const PipelineOptions& options, const Cluster& cluster) {
  for (size_t i = 0; i < options.devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (options.devices[i] == options.devices[j]) {
        return OptionProblem{"", "stages " + std::to_string(j) + " and " + std::to_string(i) + " are both on " +
                                     cluster.device(options.devices[i]).name.canonical() +
                                     ": give each stage its own device"};
      }
    }
  }
  return std::nullopt;
}

MaybeProblem tensor_groups_problem(const ParallelismOptions& options, const Cluster& cluster, bool devices_listed) {
  const int64_t product = static_cast<int64_t>(options.devices.size());
  const std::unordered_map<int, size_t> node_accelerators = accelerators_by_node(cluster);
  for (int64_t group = 0; group * options.tensor < product; ++group) {
    const DeviceId first = options.devices[static_cast<size_t>(group * options.tensor)];
    const auto in_node = node_accelerators.find(cluster.device(first).node);
    const size_t machine = in_node == node_accelerators.end() ? 0 : in_node->second;
    if (options.tensor > static_cast<int64_t>(machine)) {
      return OptionProblem{"tensor", "a tensor-parallel group of " + std::to_string(options.tensor) +
                                         " devices is larger than a machine (" + std::to_string(machine) +
                                         " accelerators): tensor groups must stay inside one machine"};
    }
    for (int64_t r = 1; r < options.tensor; ++r) {
      const DeviceId device = options.devices[static_cast<size_t>(group * options.tensor + r)];
      if (cluster.device(device).node != cluster.device(first).node) {
        return OptionProblem{devices_listed ? "devices" : "tensor",
                             "tensor-parallel group " + std::to_string(group) + " spans machines (" +
                                 cluster.device(first).name.canonical() + " and " +
                                 cluster.device(device).name.canonical() +
                                 "): tensor groups must stay inside one machine"};
      }
    }
  }
  return std::nullopt;
}

MaybeProblem virtual_stages_problem(const ParallelismOptions& options) {
  const int64_t v = options.virtual_stages;
  if (v == 1) return std::nullopt;
  const std::string what = "virtual_stages " + std::to_string(v) + " (interleaved 1F1B) ";
  if (options.schedule != PipelineSchedule::kOneFOneB) {
    return OptionProblem{"virtual_stages", what + "needs \"schedule\": \"1f1b\", got \"gpipe\""};
  }
  if (options.pipeline < 2) {
    return OptionProblem{"virtual_stages", what + "needs pipeline >= 2, got pipeline " + std::to_string(options.pipeline)};
  }
  if (options.micro_batches % options.pipeline != 0) {
    return OptionProblem{"virtual_stages", what + "needs micro_batches to be a multiple of pipeline " +
                                               std::to_string(options.pipeline) + " (Megatron-LM's rule), got micro_batches " +
                                               std::to_string(options.micro_batches)};
  }
  return std::nullopt;
}

MaybeProblem set_hybrid_shard_group(ParallelismOptions* options, const Cluster& cluster) {
  const int64_t replicas = options->replicas();  // context ranks count as replicas (strategy.h)
  const auto node = cluster.device(options->device(0, 0, 0)).node;
  int64_t group = 0;
  while (group < replicas && cluster.device(options->device(group, 0, 0)).node == node) ++group;
  if (replicas % group != 0) {
    return OptionProblem{"fsdp", "hybrid sharding groups the " + std::to_string(group) +
                                     " replicas inside one machine, which does not divide " +
                                     (options->context > 1 ? "data x context " : "data ") + std::to_string(replicas)};
  }
  options->shard_group = group;
  return std::nullopt;
}

}  // namespace placesim
