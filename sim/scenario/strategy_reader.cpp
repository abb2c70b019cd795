#include "sim/scenario/strategy_reader.h"

#include <algorithm>
#include <set>

#include "sim/cluster/transport_json.h"
#include "sim/plan/collective_schedule.h"
#include "sim/scenario/parallelism_reader.h"
#include "sim/scenario/strategy_devices.h"
#include "sim/scenario/scenario_keys.h"

namespace placesim {
namespace {

DeviceId resolve_device(const JsonReader& where, const Cluster& cluster);

AutoPlacementOptions read_auto_placement(const JsonReader& reader, const Cluster& cluster) {
  reader.reject_unknown_keys({"algorithm", "memory_fraction", "devices"});
  AutoPlacementOptions options;
  static const std::vector<std::pair<std::string, PlacementAlgorithm>> kAlgorithms = {
      {"expert", PlacementAlgorithm::kExpert},
      {"m-topo", PlacementAlgorithm::kMTopo},
      {"m-etf", PlacementAlgorithm::kMEtf},
      {"m-sct", PlacementAlgorithm::kMSct}};
  std::vector<std::string> names;
  for (const auto& [name, algorithm] : kAlgorithms) names.push_back(name);
  std::string chosen = reader.choice_or("algorithm", names, "m-etf");
  for (const auto& [name, algorithm] : kAlgorithms) {
    if (name == chosen) options.algorithm = algorithm;
  }
  options.memory_fraction = reader.positive_or("memory_fraction", 1.0);
  if (options.memory_fraction > 1) {
    reader.at("memory_fraction").fail("must be at most 1, got " + brief(reader.at("memory_fraction").value()));
  }
  if (auto devices = reader.find("devices")) {
    std::vector<bool> listed(cluster.devices().size(), false);
    for (const auto& entry : devices->elements()) {
      DeviceId device = resolve_device(entry, cluster);
      if (listed[device]) entry.fail("device " + cluster.device(device).name.canonical() + " is listed twice");
      listed[device] = true;
      options.devices.push_back(device);
    }
    if (options.devices.empty()) devices->fail("expected at least one device");
  }
  return options;
}

PlacementOptions read_placement(const JsonReader& placement, const Cluster& cluster) {
  placement.reject_unknown_keys({"rules", "allow_soft_placement", "auto"});
  PlacementOptions options;
  if (auto automatic = placement.find("auto")) {
    for (const char* key : {"rules", "allow_soft_placement"}) {
      if (placement.has(key)) placement.at(key).fail("\"" + std::string(key) + "\" does not apply with \"auto\" placement");
    }
    options.automatic = read_auto_placement(*automatic, cluster);
    return options;
  }
  options.allow_soft_placement = placement.bool_or("allow_soft_placement", false);
  if (auto rules = placement.find("rules")) {
    size_t index = 0;
    for (const auto& rule : rules->elements()) {
      rule.reject_unknown_keys({"ops", "device"});
      std::string device = rule.string_at("device");
      std::string error;
      if (!DeviceName::parse(device, &error)) rule.at("device").fail("bad device name \"" + device + "\": " + error);
      JsonReader ops = rule.at("ops");
      std::vector<JsonReader> patterns = ops.value().is_array() ? ops.elements() : std::vector<JsonReader>{ops};
      if (patterns.empty()) ops.fail("expected at least one op name pattern");
      for (const auto& pattern : patterns) {
        std::string text = pattern.as_string();
        if (text.empty()) pattern.fail("the op pattern must not be empty");
        options.rules.push_back({text, device, index});
      }
      ++index;
    }
  }
  return options;
}

PublishedFigure read_published(const JsonReader& published) {
  published.reject_unknown_keys(scenario_keys::kPublished);
  PublishedFigure figure;
  int given = 0;
  // A published step takes from a microsecond (the smallest kernels' launch) to a day; a
  // throughput from one sample a day to 1e12 samples a second: outside, a typo or another unit.
  constexpr double kSecondsPerDay = 86400;
  const struct { const char* metric; double low, high; const char* unit; } kRanges[] = {
      {"step_time_seconds", 1e-6, kSecondsPerDay, " s"},
      {"samples_per_second", 1 / kSecondsPerDay, 1e12, " samples/s"},
      // Model FLOPs per second per GPU, in TFLOP/s: above 10 PFLOP/s per device is another unit.
      {"model_tflops_per_gpu", 1e-6, 1e4, " TFLOP/s"},
      // Throughput per accelerator against another strategy's: above 2, a percentage or a speedup.
      {"scaling_efficiency", 0.01, 2, ""}};
  for (const auto& range : kRanges) {
    if (!published.has(range.metric)) continue;
    JsonReader value = published.at(range.metric);
    figure.metric = range.metric;
    figure.value = value.as_positive_number();
    if (figure.value < range.low || figure.value > range.high) {
      value.fail("a published figure of " + brief(value.value()) + range.unit + " is outside the plausible range " +
                 brief(Json(range.low)) + " to " + brief(Json(range.high)) + range.unit);
    }
    ++given;
  }
  if (given != 1) {
    published.fail(
        "give exactly one of \"step_time_seconds\", \"samples_per_second\", \"model_tflops_per_gpu\" or "
        "\"scaling_efficiency\"");
  }
  if (figure.metric == "scaling_efficiency") {
    if (!published.has("relative_to")) {
      published.fail("a \"scaling_efficiency\" needs \"relative_to\": the name of the strategy it is relative to");
    }
    figure.relative_to = published.string_at("relative_to");
  } else if (published.has("relative_to")) {
    published.at("relative_to").fail("\"relative_to\" belongs to a \"scaling_efficiency\" only");
  }
  figure.source = published.string_at("source");
  if (published.has("confidence")) published.choice_at("confidence", scenario_keys::kConfidence);
  if (published.has("note")) published.at("note").as_string();
  return figure;
}

/// One device named by a spec; several matches take the first (TensorFlow's shorthand rule).
DeviceId resolve_device(const JsonReader& where, const Cluster& cluster) {
  std::string text = where.as_string();
  std::string error;
  auto spec = DeviceName::parse(text, &error);
  if (!spec) where.fail("bad device name \"" + text + "\": " + error);
  auto matches = cluster.match(*spec);
  if (matches.empty()) where.fail("no device of the cluster matches \"" + text + "\"");
  return matches.front();
}

/// "transport": a bundled id, or an object (sim/cluster/transport_json.h).
Transport read_transport(const JsonReader& parent) {
  if (parent.at("transport").value().is_string()) return *find_transport(parent.choice_at("transport", transport_ids()));
  return read_transport_json(parent.at("transport"));
}

}  // namespace

CommunicationOptions read_communication(const JsonReader& reader, Aggregation aggregation) {
  CommunicationOptions options;
  std::vector<std::string> names = framework_names();
  options.framework = *parse_framework(reader.choice_or("framework", names, "links"));
  if (aggregation == Aggregation::kParameterServer && !has_parameter_servers(options.framework)) {
    reader.at("framework").fail(to_string(options.framework) +
                                " has no parameter servers: use \"aggregation\": \"allreduce\", or \"tensorflow-1\"");
  }
  if (reader.has("transport")) options.transport = read_transport(reader);
  if (reader.has("nccl_version")) {
    const JsonReader version = reader.at("nccl_version");
    const std::optional<NcclVersion> parsed = parse_nccl_version(version.as_string());
    if (!parsed) version.fail("expected NCCL's release as \"MAJOR.MINOR\" (1.x or 2.x, e.g. \"2.2\"), got \"" + version.as_string() + "\"");
    options.nccl_version = *parsed;
  }
  options.concurrent_collectives = reader.integer_or("concurrent_collectives", 1, 1, 64);
  return options;
}

namespace {

/// A "data_parallel" block's options without its devices.
struct DataParallelFields {
  DataParallelOptions options;     ///< no replicas, no parameter servers
  int64_t parameter_servers = 1;   ///< "num_ps" without "ps_devices": servers on the CPUs
};

DataParallelFields read_data_parallel_fields(const JsonReader& reader) {
  reader.reject_unknown_keys(scenario_keys::kDataParallel);
  DataParallelFields fields;
  DataParallelOptions& options = fields.options;
  options.mode = reader.choice_or("mode", {"sync", "async"}, "sync") == "sync" ? SyncMode::kSync : SyncMode::kAsync;
  std::string aggregation = reader.choice_or("aggregation", {"allreduce", "parameter_server"},
                                             options.mode == SyncMode::kAsync ? "parameter_server" : "allreduce");
  options.aggregation = aggregation == "allreduce" ? Aggregation::kAllReduce : Aggregation::kParameterServer;
  if (options.mode == SyncMode::kAsync && options.aggregation == Aggregation::kAllReduce) {
    reader.at("aggregation").fail("asynchronous training needs \"parameter_server\" (all-reduce is synchronous)");
  }
  if (options.aggregation == Aggregation::kParameterServer) {
    if (!reader.has("ps_devices")) fields.parameter_servers = reader.integer_or("num_ps", 1, 1, 100000);
    options.sharding =
        reader.choice_or("sharding", {"round_robin", "greedy"}, "round_robin") == "round_robin" ? Sharding::kRoundRobin
                                                                                               : Sharding::kGreedy;
    options.local_aggregation = reader.bool_or("local_aggregation", false);
    if (options.local_aggregation && options.mode == SyncMode::kAsync) {
      reader.at("local_aggregation").fail("summing gradients inside each machine first is a synchronous scheme");
    }
  } else {
    for (const char* key : {"num_ps", "ps_devices", "sharding", "local_aggregation"}) {
      if (reader.has(key)) reader.at(key).fail("\"" + std::string(key) + "\" applies to \"parameter_server\" aggregation only");
    }
    std::vector<std::string> names = collective_algorithm_names();
    names.insert(names.begin(), "auto");
    std::string algorithm = reader.choice_or("algorithm", names, "auto");
    if (algorithm != "auto") options.algorithm = parse_collective_algorithm(algorithm);
    options.overlap = reader.bool_or("overlap", true);
  }
  options.communication = read_communication(reader, options.aggregation);
  if (options.aggregation == Aggregation::kAllReduce) {
    options.bucket_bytes = bucket_bytes_or(reader, default_bucket_bytes(options.communication.framework));
  }
  return fields;
}

/// With the replicas set: the parameter servers (the given count on the CPUs), then what depends
/// on the devices.
MaybeProblem place_data_parallel(const DataParallelFields& fields, DataParallelOptions* options, const Cluster& cluster) {
  if (options->aggregation == Aggregation::kParameterServer && options->parameter_servers.empty()) {
    if (MaybeProblem problem = default_parameter_servers(fields.parameter_servers, cluster, &options->parameter_servers)) {
      return problem;
    }
  }
  return data_parallel_devices_problem(*options, cluster);
}

DataParallelOptions read_data_parallel(const JsonReader& reader, const Cluster& cluster) {
  reader.reject_unknown_keys(scenario_keys::kDataParallel);
  std::vector<DeviceId> replica_devices;
  JsonReader replicas = reader.at("replicas");
  if (replicas.value().is_array()) {
    std::vector<bool> listed(cluster.devices().size(), false);
    for (const auto& entry : replicas.elements()) {
      DeviceId device = resolve_device(entry, cluster);
      if (listed[device]) entry.fail("device " + cluster.device(device).name.canonical() + " is listed twice");
      listed[device] = true;
      replica_devices.push_back(device);
    }
    if (replica_devices.empty()) replicas.fail("expected at least one replica device");
  } else {
    int64_t count = replicas.as_integer(1, 1000000);
    std::vector<DeviceId> candidates = accelerators_else_cpus(cluster);
    if (static_cast<size_t>(count) > candidates.size()) {
      replicas.fail("asks for " + std::to_string(count) + " replicas, but the cluster has " +
                    std::to_string(candidates.size()) + " " +
                    to_string(*cluster.device(candidates.front()).name.kind) + "s");
    }
    replica_devices.assign(candidates.begin(), candidates.begin() + count);
  }
  DataParallelFields fields = read_data_parallel_fields(reader);
  DataParallelOptions options = fields.options;
  options.replicas = std::move(replica_devices);
  if (auto ps = reader.find("ps_devices"); ps && options.aggregation == Aggregation::kParameterServer) {
    for (const auto& entry : ps->elements()) options.parameter_servers.push_back(resolve_device(entry, cluster));
    if (options.parameter_servers.empty()) ps->fail("expected at least one parameter server device");
    if (reader.has("num_ps") &&
        reader.at("num_ps").as_integer(1) != static_cast<int64_t>(options.parameter_servers.size())) {
      reader.at("num_ps").fail("num_ps disagrees with the " + std::to_string(options.parameter_servers.size()) +
                               " ps_devices given");
    }
  }
  fail_on_problem(reader, place_data_parallel(fields, &options, cluster));
  return options;
}

/// A "pipeline" block's options without its devices: the micro-batches and the schedule.
PipelineOptions read_pipeline_fields(const JsonReader& reader) {
  reader.reject_unknown_keys({"stages", "devices", "micro_batches", "schedule"});
  PipelineOptions options;
  options.micro_batches = reader.integer_or("micro_batches", 1, 1, 65536);
  options.schedule = reader.choice_or("schedule", {"gpipe", "1f1b"}, "1f1b") == "gpipe" ? PipelineSchedule::kGpipe
                                                                                       : PipelineSchedule::kOneFOneB;
  return options;
}

PipelineOptions read_pipeline(const JsonReader& reader, const Cluster& cluster) {
  PipelineOptions options = read_pipeline_fields(reader);
  JsonReader stages = reader.at("stages");
  if (stages.value().is_array()) {
    if (reader.has("devices")) reader.at("devices").fail("give the devices in \"stages\" (each stage has its \"device\")");
    for (const auto& entry : stages.elements()) {
      entry.reject_unknown_keys({"ops", "device"});
      PipelineStage stage;
      stage.device = resolve_device(entry.at("device"), cluster);
      JsonReader ops = entry.at("ops");
      std::vector<JsonReader> patterns = ops.value().is_array() ? ops.elements() : std::vector<JsonReader>{ops};
      if (patterns.empty()) ops.fail("expected at least one op name pattern");
      for (const auto& pattern : patterns) {
        stage.ops.push_back(pattern.as_string());
        if (stage.ops.back().empty()) pattern.fail("the op pattern must not be empty");
      }
      options.devices.push_back(stage.device);
      options.stages.push_back(std::move(stage));
    }
    if (options.stages.empty()) stages.fail("expected at least one stage");
  } else {
    int64_t count = stages.as_integer(1, kMaxPipelineStages);
    if (auto devices = reader.find("devices")) {
      for (const auto& entry : devices->elements()) options.devices.push_back(resolve_device(entry, cluster));
      if (static_cast<int64_t>(options.devices.size()) != count) {
        devices->fail("lists " + std::to_string(options.devices.size()) + " devices for " + std::to_string(count) +
                      " stages");
      }
    } else {
      std::vector<DeviceId> candidates = accelerators_else_cpus(cluster);
      if (static_cast<size_t>(count) > candidates.size()) {
        stages.fail("asks for " + std::to_string(count) + " stages, but the cluster has " +
                    std::to_string(candidates.size()) + " " + to_string(*cluster.device(candidates.front()).name.kind) +
                    "s: list \"devices\"");
      }
      options.devices.assign(candidates.begin(), candidates.begin() + count);
    }
  }
  fail_on_problem(reader, pipeline_devices_problem(options, cluster));
  return options;
}

Strategy read_strategy(const JsonReader& reader, const Cluster& scenario_cluster, const std::string& default_name,
                       const ClusterReader* read_cluster) {
  reader.reject_unknown_keys(scenario_keys::kStrategy);
  Strategy strategy;
  strategy.name = reader.string_or("name", default_name);
  if (auto own = reader.find("cluster")) {
    if (!read_cluster) own->fail("a single \"strategy\" uses the scenario's cluster; use \"strategies\" to vary it");
    strategy.cluster = (*read_cluster)(*own);
  }
  const Cluster& cluster = strategy.cluster ? *strategy.cluster : scenario_cluster;
  if (auto placement = reader.find("placement")) strategy.placement = read_placement(*placement, cluster);
  if (strategy.placement.automatic &&
      (reader.has("data_parallel") || reader.has("pipeline") || reader.has("parallelism"))) {
    reader.at(reader.has("data_parallel") ? "data_parallel" : reader.has("pipeline") ? "pipeline" : "parallelism")
        .fail("automatic placement places one replica's ops; it is not combined with data or pipeline parallelism yet");
  }
  if (auto dp = reader.find("data_parallel")) strategy.data_parallel = read_data_parallel(*dp, cluster);
  if (auto pipeline = reader.find("pipeline")) {
    if (strategy.data_parallel) {
      pipeline->fail("\"pipeline\" and \"data_parallel\" are not combined; a \"parallelism\" strategy runs pipeline "
                     "and data parallel together: {\"parallelism\": {\"data\": D, \"pipeline\": P, \"tensor\": 1, "
                     "\"micro_batches\": M}} (docs/scenario-format.md, \"parallelism\")");
    }
    strategy.pipeline = read_pipeline(*pipeline, cluster);
  }
  if (auto parallelism = reader.find("parallelism")) {
    if (strategy.data_parallel || strategy.pipeline) {
      parallelism->fail("\"parallelism\" replaces \"data_parallel\" and \"pipeline\": give only one of them");
    }
    strategy.parallelism = read_parallelism(*parallelism, cluster);
  }
  if (auto published = reader.find("published")) strategy.published = read_published(*published);
  return strategy;
}

}  // namespace

std::vector<Strategy> read_strategies(const JsonReader& document, const Cluster& cluster,
                                      const ClusterReader& read_cluster, std::map<std::string, StrategySource>* sources) {
  if (document.has("strategy") && document.has("strategies")) {
    document.at("strategies").fail("give either \"strategy\" or \"strategies\", not both");
  }
  std::vector<Strategy> strategies;
  if (auto list = document.find("strategies")) {
    std::set<std::string> names;
    for (const auto& entry : list->elements()) {
      entry.expect_object();
      strategies.push_back(
          read_strategy(entry, cluster, "strategy " + std::to_string(strategies.size() + 1), &read_cluster));
      if (!names.insert(strategies.back().name).second) {
        entry.at("name").fail("duplicate strategy name \"" + strategies.back().name + "\"");
      }
      (*sources)[strategies.back().name].json_path = entry.path();
    }
    if (strategies.empty()) list->fail("expected at least one strategy");
    // A scaling efficiency compares two strategies that count accelerators: data-parallel or 3D.
    auto require_accelerators = [](const JsonReader& where, const Strategy& strategy) {
      if (strategy.data_parallel || strategy.parallelism) return;
      where.fail("a scaling efficiency compares data-parallel or \"parallelism\" strategies; \"" + strategy.name +
                 "\" is neither");
    };
    for (size_t i = 0; i < strategies.size(); ++i) {
      if (!strategies[i].published || strategies[i].published->relative_to.empty()) continue;
      const std::string& reference = strategies[i].published->relative_to;
      JsonReader where = list->elements()[i].at("published").at("relative_to");
      if (reference == strategies[i].name) where.fail("a strategy's scaling is relative to another strategy, not itself");
      auto named = std::find_if(strategies.begin(), strategies.end(),
                                [&](const Strategy& strategy) { return strategy.name == reference; });
      if (named == strategies.end()) where.fail("no strategy named \"" + reference + "\" in this scenario");
      require_accelerators(where, strategies[i]);
      require_accelerators(where, *named);
    }
    if (document.has("published")) {
      document.at("published").fail("with \"strategies\", give each strategy its own \"published\"");
    }
  } else {
    static const Json kEmptyObject = Json::object();
    JsonReader single = document.has("strategy") ? document.at("strategy")
                                                 : JsonReader(kEmptyObject, document.file(), "/strategy");
    if (single.has("published")) single.at("published").fail("put \"published\" at the top level of the scenario");
    strategies.push_back(read_strategy(single, cluster, "default", nullptr));
    (*sources)[strategies.back().name].json_path = single.path();
    if (auto published = document.find("published")) {
      strategies.back().published = read_published(*published);
      if (strategies.back().published->metric == "scaling_efficiency") {
        published->at("scaling_efficiency").fail("a scaling efficiency is relative to another strategy: give \"strategies\"");
      }
    }
  }
  return strategies;
}

void fail_on_problem(const JsonReader& object, const MaybeProblem& problem) {
  if (!problem) return;
  (problem->field.empty() || !object.has(problem->field) ? object : object.at(problem->field)).fail(problem->message);
}

UnplacedStrategy read_unplaced_strategy(const std::string& name, const std::string& kind, const JsonReader& body,
                                        const std::string& strategy_path) {
  UnplacedStrategy unplaced;
  unplaced.strategy.name = name;
  unplaced.kind = kind;
  unplaced.file = body.file();
  unplaced.source.json_path = strategy_path;
  body.expect_object();
  for (const char* devices : {"replicas", "ps_devices", "stages", "devices", "data"}) {
    if (body.has(devices)) body.at(devices).fail(std::string("\"") + devices + "\" is set where the strategy is placed");
  }
  if (kind == "data_parallel") {
    DataParallelFields fields = read_data_parallel_fields(body);
    unplaced.strategy.data_parallel = fields.options;
    unplaced.parameter_servers = fields.parameter_servers;
  } else if (kind == "pipeline") {
    unplaced.strategy.pipeline = read_pipeline_fields(body);
  } else if (kind == "parallelism") {
    ParallelismFields fields = read_parallelism_fields(body);
    unplaced.strategy.parallelism = fields.options;
    unplaced.hybrid_sharding = fields.hybrid_sharding;
  } else {
    throw std::invalid_argument("read_unplaced_strategy: unknown kind \"" + kind + "\"");
  }
  return unplaced;
}

InputError option_error(const UnplacedStrategy& unplaced, const OptionProblem& problem) {
  const std::string option = problem.field.empty() ? unplaced.kind : unplaced.kind + "/" + problem.field;
  return InputError(unplaced.file, unplaced.source.path_of(option), problem.message);
}

Strategy place_strategy(const UnplacedStrategy& unplaced, const std::vector<DeviceId>& devices, const Cluster& cluster) {
  Strategy strategy = unplaced.strategy;
  auto fail = [&](const OptionProblem& problem) { throw option_error(unplaced, problem); };
  MaybeProblem problem;
  if (strategy.data_parallel) {
    DataParallelFields fields{*strategy.data_parallel, unplaced.parameter_servers};
    strategy.data_parallel->replicas = devices;
    problem = place_data_parallel(fields, &*strategy.data_parallel, cluster);
  } else if (strategy.pipeline) {
    if (static_cast<int64_t>(devices.size()) > kMaxPipelineStages) {
      fail({"", std::to_string(devices.size()) + " pipeline stages, above the limit of " +
                    std::to_string(kMaxPipelineStages)});
    }
    strategy.pipeline->devices = devices;
    problem = pipeline_devices_problem(*strategy.pipeline, cluster);
  } else if (strategy.parallelism) {
    ParallelismFields fields{*strategy.parallelism, unplaced.hybrid_sharding};
    ParallelismOptions& options = fields.options;
    if (MaybeProblem too_large = sized_parallelism_problem(options)) fail(*too_large);
    options.devices = devices;
    problem = check_parallelism_devices(&fields, cluster, false);
    strategy.parallelism = options;
  }
  if (problem) fail(*problem);
  return strategy;
}

double bucket_bytes_or(const JsonReader& reader, double fallback) {
  auto value = reader.find("bucket_bytes");
  if (!value) return fallback;
  const double bytes = value->at_most(value->as_positive_number(), kMaxPlausibleBytes);
  if (bytes < 1) value->fail("a gradient bucket holds at least one byte, got " + brief(value->value()));
  return bytes;
}

}  // namespace placesim
