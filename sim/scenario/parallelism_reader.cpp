#include "sim/scenario/parallelism_reader.h"

#include <algorithm>
#include <unordered_map>

#include "sim/plan/collective_schedule.h"
#include "sim/planner/tensor_parallel.h"
#include "sim/scenario/scenario_keys.h"
#include "sim/scenario/strategy_reader.h"

namespace placesim {
namespace {

constexpr int64_t kMaxGroup = 65536;

std::vector<std::string> patterns_or(const JsonReader& reader, const std::string& key,
                                     std::vector<std::string> fallback) {
  auto list = reader.find(key);
  if (!list) return fallback;
  std::vector<std::string> patterns;
  for (const auto& entry : list->elements()) {
    patterns.push_back(entry.as_string());
    if (patterns.back().empty()) entry.fail("the op pattern must not be empty");
  }
  return patterns;
}

std::vector<DeviceId> accelerators(const Cluster& cluster) {
  for (DeviceKind kind : {DeviceKind::kGpu, DeviceKind::kTpu}) {
    std::vector<DeviceId> found;
    for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
      if (cluster.device(id).name.kind == kind) found.push_back(id);
    }
    if (!found.empty()) return found;
  }
  return {};
}

/// How many accelerators each machine holds, by node number: counted once, so that checking every
/// tensor group of 800,000 GPUs is linear (a scan of the cluster per group took over 10 minutes).
std::unordered_map<int, size_t> accelerators_by_node(const Cluster& cluster) {
  std::unordered_map<int, size_t> counts;
  for (DeviceId id : accelerators(cluster)) ++counts[cluster.device(id).node];
  return counts;
}

/// "zero": 1 | 2 | 3, or "fsdp": "full" (ZeRO 3 over all replicas) | "hybrid" (ZeRO 3 over the
/// replicas inside one machine, all-reduced across machines); docs/llm-planning.md.
void read_sharding(const JsonReader& reader, const Cluster& cluster, ParallelismOptions* options) {
  if (reader.has("zero") && reader.has("fsdp")) {
    reader.at("fsdp").fail("give \"zero\" or \"fsdp\", not both (FSDP full sharding is ZeRO stage 3)");
  }
  options->zero_stage = static_cast<int>(reader.integer_or("zero", 0, 0, 3));
  if (!reader.has("fsdp")) return;
  const std::string mode = reader.choice_or("fsdp", {"full", "hybrid"}, "full");
  options->zero_stage = 3;
  if (mode == "full") return;
  // Hybrid: the replicas of (stage 0, rank 0) on the first replica's machine form a shard group.
  const int64_t data = options->data;
  const auto node = cluster.device(options->device(0, 0, 0)).node;
  int64_t group = 0;
  while (group < data && cluster.device(options->device(group, 0, 0)).node == node) ++group;
  if (data % group != 0) {
    reader.at("fsdp").fail("hybrid sharding groups the " + std::to_string(group) + " replicas inside one machine, " +
                           "which does not divide data " + std::to_string(data));
  }
  options->shard_group = group;
}

/// "virtual_stages": V, interleaved 1F1B (docs/pipeline-parallel.md#interleaved-1f1b). Megatron-LM's
/// conditions: the 1F1B schedule, more than one stage, and micro-batches in groups of `pipeline`.
/// Whether the graph has pipeline x V chunks to give is known when the plan is built.
void read_virtual_stages(const JsonReader& reader, ParallelismOptions* options) {
  options->virtual_stages = reader.integer_or("virtual_stages", 1, 1, 65536);
  const int64_t v = options->virtual_stages;
  if (v == 1) return;
  const JsonReader value = reader.at("virtual_stages");
  const std::string what = "virtual_stages " + std::to_string(v) + " (interleaved 1F1B) ";
  if (options->schedule != PipelineSchedule::kOneFOneB) value.fail(what + "needs \"schedule\": \"1f1b\", got \"gpipe\"");
  if (options->pipeline < 2) value.fail(what + "needs pipeline >= 2, got pipeline " + std::to_string(options->pipeline));
  if (options->micro_batches % options->pipeline != 0) {
    value.fail(what + "needs micro_batches to be a multiple of pipeline " + std::to_string(options->pipeline) +
               " (Megatron-LM's rule), got micro_batches " + std::to_string(options->micro_batches));
  }
}

}  // namespace

ParallelismOptions read_parallelism(const JsonReader& reader, const Cluster& cluster) {
  reader.reject_unknown_keys(scenario_keys::kParallelism);
  ParallelismOptions options;
  options.json_path = reader.path();
  options.tensor = reader.integer_or("tensor", 1, 1, kMaxGroup);
  options.pipeline = reader.integer_or("pipeline", 1, 1, kMaxGroup);
  options.data = reader.integer_or("data", 1, 1, kMaxGroup);
  const int64_t product = options.tensor * options.pipeline * options.data;
  const std::string sizes = "data " + std::to_string(options.data) + " x pipeline " + std::to_string(options.pipeline) +
                            " x tensor " + std::to_string(options.tensor) + " = " + std::to_string(product);
  if (auto devices = reader.find("devices")) {
    std::vector<bool> listed(cluster.devices().size(), false);
    for (const auto& entry : devices->elements()) {
      std::string text = entry.as_string();
      std::string error;
      auto spec = DeviceName::parse(text, &error);
      if (!spec) entry.fail("bad device name \"" + text + "\": " + error);
      auto matches = cluster.match(*spec);
      if (matches.empty()) entry.fail("no device of the cluster matches \"" + text + "\"");
      if (listed[matches.front()]) {
        entry.fail("device " + cluster.device(matches.front()).name.canonical() + " is listed twice");
      }
      listed[matches.front()] = true;
      options.devices.push_back(matches.front());
    }
    if (static_cast<int64_t>(options.devices.size()) != product) {
      devices->fail("lists " + std::to_string(options.devices.size()) + " devices, but " + sizes +
                    " devices are needed (one per replica, stage and tensor rank)");
    }
  } else {
    std::vector<DeviceId> candidates = accelerators(cluster);
    if (product > static_cast<int64_t>(candidates.size())) {
      reader.fail(sizes + " devices, but the cluster has " + std::to_string(candidates.size()) + " GPUs");
    }
    options.devices.assign(candidates.begin(), candidates.begin() + product);
  }
  // Tensor groups exchange activations twice per layer each way: keep each inside one machine.
  const std::unordered_map<int, size_t> node_accelerators = accelerators_by_node(cluster);
  for (int64_t group = 0; group * options.tensor < product; ++group) {
    DeviceId first = options.devices[static_cast<size_t>(group * options.tensor)];
    const auto in_node = node_accelerators.find(cluster.device(first).node);
    const size_t machine = in_node == node_accelerators.end() ? 0 : in_node->second;
    if (options.tensor > static_cast<int64_t>(machine)) {
      reader.at("tensor").fail("a tensor-parallel group of " + std::to_string(options.tensor) +
                               " devices is larger than a machine (" + std::to_string(machine) +
                               " accelerators): tensor groups must stay inside one machine");
    }
    for (int64_t r = 1; r < options.tensor; ++r) {
      DeviceId device = options.devices[static_cast<size_t>(group * options.tensor + r)];
      if (cluster.device(device).node != cluster.device(first).node) {
        (reader.has("devices") ? reader.at("devices") : reader.at("tensor"))
            .fail("tensor-parallel group " + std::to_string(group) + " spans machines (" +
                  cluster.device(first).name.canonical() + " and " + cluster.device(device).name.canonical() +
                  "): tensor groups must stay inside one machine");
      }
    }
  }
  options.micro_batches = reader.integer_or("micro_batches", 1, 1, 65536);
  options.schedule = reader.choice_or("schedule", {"gpipe", "1f1b"}, "1f1b") == "gpipe" ? PipelineSchedule::kGpipe
                                                                                       : PipelineSchedule::kOneFOneB;
  read_virtual_stages(reader, &options);
  options.sequence_parallel = reader.bool_or("sequence_parallel", false);
  options.whole_layer_stages = reader.choice_or("stage_split", {"compute", "layers"}, "compute") == "layers";
  options.scatter_gather = reader.bool_or("scatter_gather", true);
  if (reader.bool_or("selective_recompute", false)) {
    options.selective_recompute = patterns_or(reader, "selective_recompute_ops", default_selective_recompute_ops());
  } else if (reader.has("selective_recompute_ops")) {
    reader.at("selective_recompute_ops").fail("give \"selective_recompute\": true to use it");
  }
  options.column_parallel = patterns_or(reader, "column_parallel", default_column_parallel_ops());
  options.row_parallel = patterns_or(reader, "row_parallel", default_row_parallel_ops());
  if (reader.bool_or("tied_embeddings", false)) options.tied_weights = default_tied_weights();
  std::vector<std::string> names = collective_algorithm_names();
  names.insert(names.begin(), "auto");
  std::string algorithm = reader.choice_or("algorithm", names, "auto");
  if (algorithm != "auto") options.algorithm = parse_collective_algorithm(algorithm);
  options.bucket_bytes = bucket_bytes_or(reader, options.bucket_bytes);
  read_sharding(reader, cluster, &options);
  return options;
}

}  // namespace placesim
