#include "sim/scenario/parallelism_reader.h"

#include <algorithm>

#include "sim/plan/collective_schedule.h"
#include "sim/planner/tensor_parallel.h"
#include "sim/scenario/scenario_keys.h"
#include "sim/scenario/strategy_reader.h"
#include "sim/spec/parallelism_sizes.h"

namespace placesim {
namespace {

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

/// "zero": 1 | 2 | 3, or "fsdp": "full" (ZeRO 3 over all replicas) | "hybrid" (ZeRO 3 over the
/// replicas inside one machine, all-reduced across machines; the group is found once the devices
/// are known); docs/llm-planning.md.
void read_sharding(const JsonReader& reader, ParallelismFields* fields) {
  if (reader.has("zero") && reader.has("fsdp")) {
    reader.at("fsdp").fail("give \"zero\" or \"fsdp\", not both (FSDP full sharding is ZeRO stage 3)");
  }
  fields->options.zero_stage = static_cast<int>(reader.integer_or("zero", 0, 0, 3));
  if (!reader.has("fsdp")) return;
  fields->options.zero_stage = 3;
  fields->hybrid_sharding = reader.choice_or("fsdp", {"full", "hybrid"}, "full") == "hybrid";
}

/// PipeDream's replicated stages, "stage_replicas": [15, 1] (ParallelismOptions::stage_replicas):
/// a width per stage, the largest divisible by each; "data", if given, the largest.
void read_stage_replicas(const JsonReader& reader, ParallelismOptions* options) {
  const auto list = reader.find("stage_replicas");
  if (!list) return;
  if (list->value().is_string()) {  // "auto": PipeDream's partitioner (sim/session/automatic_stages.h)
    if (list->as_string() != "auto") list->fail("give a width per stage or \"auto\", not \"" + list->as_string() + "\"");
    if (!options->asynchronous || options->double_buffered) {
      list->fail("PipeDream's partitioner picks replicated stages for \"schedule\": \"pipedream\"");
    }
    for (const char* key : {"data", "stage_ops", "stage_split", "device_order", "virtual_stages"}) {
      if (reader.has(key)) {
        reader.at(key).fail("with \"stage_replicas\": \"auto\" the partitioner chooses the stages, their ops and "
                            "widths over every listed device (or the cluster's GPUs); leave \"" + std::string(key) + "\" out");
      }
    }
    if (options->tensor > 1 || options->context > 1 || options->expert > 1) {
      list->fail("PipeDream's partitioner splits over replicas of one device each (no tensor, context or expert "
                 "parallelism)");
    }
    if (reader.has("pipeline") && options->pipeline < 2) {
      reader.at("pipeline").fail("with \"stage_replicas\": \"auto\" give at least 2 stages, or leave it out for the "
                                 "partitioner to choose");
    }
    options->automatic_stages = reader.has("pipeline") ? options->pipeline : 0;
    options->pipeline = 1;
    return;
  }
  list->expect_array();
  for (const auto& entry : list->elements()) options->stage_replicas.push_back(entry.as_integer(1, kMaxParallelismSize));
  const auto widths = static_cast<int64_t>(options->stage_replicas.size());
  if (!options->asynchronous || options->double_buffered) {
    list->fail("replicated stages of their own widths are PipeDream's (\"schedule\": \"pipedream\"); with " +
               std::string(options->double_buffered ? "PipeDream-2BW" : "a flushed schedule") +
               " every stage has \"data\" replicas");
  }
  if (widths != options->pipeline) {
    list->fail("gives " + std::to_string(widths) + (widths == 1 ? " width" : " widths") + " for \"pipeline\" " +
               std::to_string(options->pipeline) + ": one per stage");
  }
  if (options->context > 1 || options->expert > 1) {
    list->fail("replicated stages are modelled without context or expert parallelism");
  }
  if (reader.has("device_order")) {
    reader.at("device_order").fail("with \"stage_replicas\" the devices are read stage by stage (stage 0's replicas "
                                   "first); leave \"device_order\" out");
  }
  const int64_t widest = *std::max_element(options->stage_replicas.begin(), options->stage_replicas.end());
  for (size_t s = 0; s < options->stage_replicas.size(); ++s) {
    if (widest % options->stage_replicas[s] != 0) {
      list->at_index(s).fail("stage " + std::to_string(s) + "'s " + std::to_string(options->stage_replicas[s]) +
                             " replicas do not divide the widest stage's " + std::to_string(widest) +
                             ": micro-batches go round robin, each replica of a stage taking the same share");
    }
  }
  if (reader.has("data") && options->data != widest) {
    reader.at("data").fail("is " + std::to_string(options->data) + ", but with \"stage_replicas\" it is the widest stage's " +
                           std::to_string(widest) + " (or leave it out)");
  }
  options->data = widest;
}

/// "stage_ops": [["conv*", "pool*"], ["fc*"]]: each stage's op-name globs, one list per stage.
void read_stage_ops(const JsonReader& reader, ParallelismOptions* options) {
  const auto list = reader.find("stage_ops");
  if (!list) return;
  list->expect_array();
  for (const auto& stage : list->elements()) {
    stage.expect_array();
    options->stage_ops.emplace_back();
    for (const auto& glob : stage.elements()) {
      options->stage_ops.back().push_back(glob.as_string());
      if (options->stage_ops.back().back().empty()) glob.fail("the op pattern must not be empty");
    }
    if (options->stage_ops.back().empty()) stage.fail("give at least one op pattern for the stage");
  }
  if (static_cast<int64_t>(options->stage_ops.size()) != options->pipeline) {
    list->fail("gives " + std::to_string(options->stage_ops.size()) +
               (options->stage_ops.size() == 1 ? " list of ops" : " lists of ops") + " for \"pipeline\" " +
               std::to_string(options->pipeline) + ": one per stage");
  }
  if (options->virtual_stages > 1) list->fail("splits the model into stages, not into interleaved model chunks");
  if (reader.has("stage_split")) reader.at("stage_split").fail("give \"stage_split\" or \"stage_ops\", not both");
}

}  // namespace

ParallelismFields read_parallelism_fields(const JsonReader& reader) {
  reader.reject_unknown_keys(scenario_keys::kParallelism);
  ParallelismFields fields;
  ParallelismOptions& options = fields.options;
  options.tensor = reader.integer_or("tensor", 1, 1, kMaxParallelismSize);
  options.pipeline = reader.integer_or("pipeline", 1, 1, kMaxParallelismSize);
  options.data = reader.integer_or("data", 1, 1, kMaxParallelismSize);
  options.context = reader.integer_or("context", 1, 1, kMaxParallelismSize);
  options.expert = reader.integer_or("expert", 1, 1, kMaxParallelismSize);
  options.pipeline_outermost = reader.choice_or("device_order", {"tp-cp-pp-dp", "tp-cp-dp-pp"}, "tp-cp-pp-dp") == "tp-cp-dp-pp";
  options.micro_batches = reader.integer_or("micro_batches", 1, 1, kMaxParallelismSize);
  const std::string schedule = reader.choice_or("schedule", {"gpipe", "1f1b", "pipedream", "pipedream-2bw"}, "1f1b");
  options.schedule = schedule == "gpipe" ? PipelineSchedule::kGpipe : PipelineSchedule::kOneFOneB;
  options.asynchronous = schedule == "pipedream" || schedule == "pipedream-2bw";
  options.double_buffered = schedule == "pipedream-2bw";
  // Interleaved 1F1B (docs/pipeline-parallel.md#interleaved-1f1b); its conditions are checked
  // with the sizes (virtual_stages_problem), whether the graph has pipeline x V chunks to give
  // when the plan is built.
  options.virtual_stages = reader.integer_or("virtual_stages", 1, 1, 65536);
  options.sequence_parallel = reader.bool_or("sequence_parallel", false);
  options.tensor_comm_overlap = reader.bool_or("tp_comm_overlap", false);
  if (options.tensor_comm_overlap && !options.sequence_parallel) {
    reader.at("tp_comm_overlap")
        .fail("overlaps sequence parallelism's all-gathers and reduce-scatters with the GEMMs, as Megatron-LM's "
              "--tp-comm-overlap does: give \"sequence_parallel\": true as well");
  }
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
  options.communication = read_communication(reader, Aggregation::kAllReduce);
  options.bucket_bytes = bucket_bytes_or(reader, default_bucket_bytes(options.communication.framework));
  read_sharding(reader, &fields);
  read_stage_replicas(reader, &options);
  read_stage_ops(reader, &options);
  return fields;
}

MaybeProblem sized_parallelism_problem(const ParallelismOptions& options) {
  for (auto [size, what] : {std::pair<int64_t, const char*>{options.data, "data"}, {options.micro_batches, "micro_batches"}}) {
    if (size > kMaxParallelismSize) {
      return OptionProblem{what, std::string(what) + " " + std::to_string(size) + " is above the limit of " +
                                     std::to_string(kMaxParallelismSize)};
    }
  }
  return std::nullopt;
}

MaybeProblem check_parallelism_devices(ParallelismFields* fields, const Cluster& cluster, bool devices_listed) {
  if (MaybeProblem problem = tensor_groups_problem(fields->options, cluster, devices_listed)) return problem;
  if (MaybeProblem problem = virtual_stages_problem(fields->options)) return problem;
  if (fields->hybrid_sharding) return set_hybrid_shard_group(&fields->options, cluster);
  return std::nullopt;
}

ParallelismOptions read_parallelism(const JsonReader& reader, const Cluster& cluster) {
  ParallelismFields fields = read_parallelism_fields(reader);
  ParallelismOptions& options = fields.options;
  if (options.automatic_stages) {  // one replica per listed device, else per GPU of the cluster
    const auto listed = reader.find("devices");
    options.data = listed ? static_cast<int64_t>(listed->size())
                          : static_cast<int64_t>(accelerators_else_cpus(cluster).size());
  }
  const int64_t product = options.device_count();
  const std::string sizes = parallelism_sizes_text(options) + " = " + std::to_string(product);
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
                    " devices are needed (one per replica, stage, context rank and tensor rank)");
    }
  } else {
    // Its GPUs (or TPUs); a cluster of CPUs only (the real backend's measured-cpu) its CPUs.
    const bool cpus_only = cluster_accelerators(cluster).empty();
    std::vector<DeviceId> candidates = accelerators_else_cpus(cluster);
    if (product > static_cast<int64_t>(candidates.size())) {
      reader.fail(sizes + " devices, but the cluster has " + std::to_string(candidates.size()) +
                  (cpus_only ? " CPUs and no GPUs" : " GPUs"));
    }
    options.devices.assign(candidates.begin(), candidates.begin() + product);
  }
  fail_on_problem(reader, check_parallelism_devices(&fields, cluster, reader.has("devices")));
  return options;
}

}  // namespace placesim
