#include "sim/scenario/sweep_reader.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "sim/cluster/cluster_builder.h"
#include "sim/core/input_error.h"
#include "sim/core/precision.h"

namespace placesim {
namespace {

constexpr int64_t kMaxConfigurations = 1000000;
constexpr int64_t kMaxBatch = int64_t{1} << 32;
// Goals and budgets: far above any training run so far (GPT-4 class: ~1e13 tokens, ~1e8 USD),
// far below where a typo or a wrong unit would still look like a number.
constexpr double kMaxTrainSamples = 1e15;
constexpr double kMaxTrainTokens = 1e18;
constexpr double kMaxSamplesPerSecond = 1e12;
constexpr double kMaxTokensPerSecond = 1e15;
constexpr double kMaxTimeToTrainSeconds = 1e10;  // 317 years
constexpr double kMaxUsdPerHour = 1e9;
constexpr double kMaxUsdToTrain = 1e12;

double positive_at_most(const JsonReader& object, const std::string& key, double limit) {
  JsonReader value = object.at(key);
  return value.at_most(value.as_positive_number(), limit);
}

/// A list of integers: an array, a single integer, or a range {"from", "to", and "step" or "times"}.
std::vector<int64_t> read_integers(const JsonReader& reader, int64_t min_value, int64_t max_value) {
  std::vector<int64_t> values;
  if (reader.value().is_array()) {
    for (const auto& entry : reader.elements()) values.push_back(entry.as_integer(min_value, max_value));
  } else if (reader.value().is_object()) {
    reader.reject_unknown_keys({"from", "to", "step", "times"});
    int64_t from = reader.at("from").as_integer(min_value, max_value);
    int64_t to = reader.at("to").as_integer(min_value, max_value);
    if (to < from) reader.at("to").fail("the range ends (" + std::to_string(to) + ") before it starts (" + std::to_string(from) + ")");
    if (reader.has("step") == reader.has("times")) reader.fail("give exactly one of \"step\" or \"times\"");
    int64_t step = reader.has("step") ? reader.at("step").as_integer(1, max_value) : 0;
    int64_t times = reader.has("times") ? reader.at("times").as_integer(2, 1024) : 0;
    for (int64_t v = from; v <= to; v = step ? v + step : v * times) {
      values.push_back(v);
      if (static_cast<int64_t>(values.size()) > kMaxConfigurations) reader.fail("the range has too many values");
      if (v > max_value / std::max<int64_t>(times, 1) - step) break;
    }
  } else {
    values.push_back(reader.as_integer(min_value, max_value));
  }
  if (values.empty()) reader.fail("expected at least one value");
  std::set<int64_t> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!seen.insert(values[i]).second) {
      (reader.value().is_array() ? reader.at_index(i) : reader).fail("the value " + std::to_string(values[i]) + " is listed twice");
    }
  }
  return values;
}

std::vector<JsonReader> as_list(const JsonReader& reader) {
  if (!reader.value().is_array()) return {reader};
  std::vector<JsonReader> entries = reader.elements();
  if (entries.empty()) reader.fail("expected at least one value");
  return entries;
}

NodeType read_node_type(const JsonReader& where, const HardwareCatalog& catalog) {
  NodeType type;
  type.template_id = where.as_string();
  std::filesystem::path path = catalog.cluster_template(type.template_id, where);
  Json template_document = parse_json_file(path);
  type.has_fabric = template_document.is_object() && template_document.contains("fabric");
  const Cluster cluster = build_template_cluster(type.template_id, 1, "", catalog);
  type.node_devices = static_cast<int64_t>(cluster.devices().size());
  for (DeviceKind kind : {DeviceKind::kGpu, DeviceKind::kTpu, DeviceKind::kCpu}) {
    for (const ClusterDevice& device : cluster.devices()) {
      if (device.node == 0 && device.name.kind == kind) type.accelerators.push_back(device.name.local());
    }
    if (!type.accelerators.empty()) {
      for (const ClusterDevice& device : cluster.devices()) {
        if (device.node == 0 && device.name.kind == kind) {
          if (!type.device_id.empty() && type.device_id != device.spec.id) {
            where.fail("the node of \"" + type.template_id + "\" mixes accelerator profiles (" + type.device_id + ", " +
                       device.spec.id + "): a sweep needs one device type per node");
          }
          type.device_id = device.spec.id;
        }
      }
      break;
    }
  }
  return type;
}

// Keys of a strategy whose list values are swept (each value a variant).
const std::vector<std::string> kDataParallelSwept = {"mode", "aggregation", "num_ps", "algorithm", "local_aggregation",
                                                     "overlap", "bucket_bytes", "sharding"};
const std::vector<std::string> kPipelineSwept = {"micro_batches", "schedule"};
const std::vector<std::string> kParallelismSwept = {"tensor", "context", "expert", "device_order", "pipeline", "micro_batches", "micro_batch_size", "schedule",
                                                    "virtual_stages", "algorithm", "sequence_parallel", "tp_comm_overlap",
                                                    "selective_recompute", "zero", "fsdp", "scatter_gather",
                                                    "bucket_bytes", "stage_split"};

std::string value_label(const Json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

void read_strategy_variants(const JsonReader& entry, std::vector<StrategyVariant>* variants) {
  entry.expect_object();
  entry.reject_unknown_keys({"name", "data_parallel", "pipeline", "parallelism"});
  const int kinds = int(entry.has("data_parallel")) + int(entry.has("pipeline")) + int(entry.has("parallelism"));
  if (kinds != 1) entry.fail("give exactly one of \"data_parallel\", \"pipeline\" or \"parallelism\"");
  std::string kind = entry.has("data_parallel") ? "data_parallel" : entry.has("pipeline") ? "pipeline" : "parallelism";
  JsonReader body = entry.at(kind);
  body.expect_object();
  const std::vector<std::string>& swept = kind == "data_parallel" ? kDataParallelSwept
                                          : kind == "pipeline"    ? kPipelineSwept
                                                                  : kParallelismSwept;
  for (const char* fixed : {"replicas", "ps_devices", "stages", "devices", "data"}) {
    if (body.has(fixed)) body.at(fixed).fail(std::string("the sweep sets \"") + fixed + "\" from devices_per_node and nodes");
  }
  if (kind == "parallelism" && body.has("stage_replicas")) {
    body.at("stage_replicas").fail("a sweep gives every stage `data` replicas from devices_per_node and nodes; "
                                   "PipeDream's replicated stages are for `placesim run`");
  }
  if (kind == "parallelism" && body.has("micro_batches") && body.has("micro_batch_size")) {
    body.fail("give \"micro_batches\" (per data-parallel replica) or \"micro_batch_size\" (samples per micro-batch), not both");
  }
  // The sweep divides the GPUs and the batch by these before the scenario loader sees them.
  for (const char* size : {"tensor", "context", "expert", "pipeline", "micro_batches", "micro_batch_size", "virtual_stages"}) {
    if (kind != "parallelism" || !body.has(size)) continue;
    JsonReader value = body.at(size);
    if (value.value().is_array()) {
      for (const auto& item : as_list(value)) item.as_integer(1, 65536);
    } else {
      value.as_integer(1, 65536);
    }
  }
  std::string name = entry.string_or("name", kind == "data_parallel" ? "data parallel"
                                             : kind == "pipeline"    ? "pipeline"
                                                                     : "3D");
  // Cartesian product of the swept keys' lists, first key slowest; each variant remembers where
  // its listed values are.
  struct Partial {
    Json body = Json::object();
    std::string label;
    std::map<std::string, std::string> option_paths;
  };
  std::vector<Partial> partial = {Partial{Json::object(), name, {}}};
  for (const std::string& key : body.keys()) {
    JsonReader value = body.at(key);
    bool listed = value.value().is_array() && std::find(swept.begin(), swept.end(), key) != swept.end();
    std::vector<JsonReader> values = listed ? as_list(value) : std::vector<JsonReader>{value};
    std::vector<Partial> next;
    for (const Partial& p : partial) {
      for (const JsonReader& v : values) {
        Partial copy = p;
        copy.body[key] = v.value();
        if (listed) {
          copy.label += " " + key + "=" + value_label(v.value());
          copy.option_paths[key] = v.path();
        }
        next.push_back(std::move(copy));
      }
    }
    partial = std::move(next);
  }
  for (Partial& p : partial) {
    for (const StrategyVariant& existing : *variants) {
      if (existing.label == p.label) entry.fail("two strategies are both called \"" + p.label + "\": give each a \"name\"");
    }
    StrategyVariant variant;
    variant.label = p.label;
    variant.kind = kind;
    variant.json_path = body.path();
    variant.option_paths = std::move(p.option_paths);
    variant.sets_micro_batches = p.body.contains("micro_batches");
    variant.sets_algorithm = p.body.contains("algorithm");
    if (p.body.contains("micro_batch_size")) {
      variant.micro_batch_size = p.body["micro_batch_size"].get<int64_t>();
      p.body.erase("micro_batch_size");
    }
    variant.strategy = Json{{kind, std::move(p.body)}};
    variants->push_back(std::move(variant));
  }
}

}  // namespace

SweepSpec read_sweep_spec(const JsonReader& document, const HardwareCatalog& catalog) {
  JsonReader sweep = document.at("sweep");
  sweep.expect_object();
  sweep.reject_unknown_keys({"node", "devices_per_node", "nodes", "fabric", "strategies", "batch_size", "precision",
                             "target", "budget", "train", "tokens_per_sample", "prices", "fidelity"});
  SweepSpec spec;

  // Node types: the sweep's list, else the scenario's cluster template.
  if (auto nodes = sweep.find("node")) {
    std::set<std::string> seen;
    for (const auto& entry : as_list(*nodes)) {
      spec.node_types.push_back(read_node_type(entry, catalog));
      if (!seen.insert(spec.node_types.back().template_id).second) entry.fail("\"" + entry.as_string() + "\" is listed twice");
    }
  } else {
    JsonReader cluster = document.at("cluster");
    if (!cluster.has("template")) sweep.fail("give \"node\" (cluster templates): the scenario's cluster is not a template");
    spec.node_types.push_back(read_node_type(cluster.at("template"), catalog));
  }

  std::vector<int64_t> devices_per_node;
  if (auto per_node = sweep.find("devices_per_node")) devices_per_node = read_integers(*per_node, 1, 4096);
  std::vector<int64_t> node_counts = {1};
  if (auto nodes = sweep.find("nodes")) node_counts = read_integers(*nodes, 1, kMaxClusterNodes);
  // Refused from the spec's size, before any configuration builds its cluster.
  for (const NodeType& type : spec.node_types) {
    for (size_t i = 0; i < node_counts.size(); ++i) {
      const int64_t devices = node_counts[i] * type.node_devices;
      if (devices <= kMaxClusterDevices) continue;
      JsonReader nodes = sweep.at("nodes");
      (nodes.value().is_array() ? nodes.at_index(i) : nodes)
          .fail(std::to_string(node_counts[i]) + " nodes of \"" + type.template_id + "\" hold " + std::to_string(devices) +
                " devices (" + std::to_string(type.node_devices) + " each, CPUs included), above the limit of " +
                "1,000,000 devices per cluster");
    }
  }

  std::vector<std::string> fabrics = {""};
  if (auto fabric = sweep.find("fabric")) {
    fabrics.clear();
    for (const auto& entry : as_list(*fabric)) {
      catalog.link(entry.as_string(), entry);
      fabrics.push_back(entry.as_string());
    }
  }
  bool several_nodes = false;
  for (int64_t n : node_counts) several_nodes = several_nodes || n > 1;
  for (size_t t = 0; t < spec.node_types.size(); ++t) {
    if (several_nodes && !spec.node_types[t].has_fabric && !sweep.has("fabric")) {
      sweep.at("nodes").fail("\"" + spec.node_types[t].template_id +
                             "\" has no fabric between nodes: give \"fabric\" (link types, e.g. [\"ib_edr\"])");
    }
  }

  if (auto strategies = sweep.find("strategies")) {
    for (const auto& entry : as_list(*strategies)) read_strategy_variants(entry, &spec.strategies);
  } else {
    StrategyVariant all_reduce;
    all_reduce.label = "all-reduce";
    all_reduce.kind = "data_parallel";
    all_reduce.strategy = Json{{"data_parallel", Json::object()}};
    all_reduce.json_path = "/sweep/data_parallel";  // implied: the sweep lists no strategies
    spec.strategies.push_back(std::move(all_reduce));
  }

  static const Json kEmptyObject = Json::object();
  JsonReader run = document.has("run") ? document.at("run") : JsonReader(kEmptyObject, document.file(), "/run");
  std::vector<int64_t> batches = {run.has("batch_size") ? run.at("batch_size").as_integer(1, kMaxBatch) : 1};
  if (auto batch = sweep.find("batch_size")) batches = read_integers(*batch, 1, kMaxBatch);
  std::vector<std::string> precisions = {run.has("precision") ? run.at("precision").as_string() : "fp32"};
  if (auto precision = sweep.find("precision")) {
    precisions.clear();
    for (const auto& entry : as_list(*precision)) {
      std::string name = entry.as_string();
      if (!parse_precision(name)) {
        std::string names;
        for (const auto& known : precision_names()) names += (names.empty() ? "" : ", ") + known;
        entry.fail("unknown precision \"" + name + "\" (expected one of " + names + ")");
      }
      precisions.push_back(name);
    }
  }

  // Prices: every node type needs one for its device.
  spec.prices = load_price_list(catalog.root());
  if (auto prices = sweep.find("prices")) apply_price_overrides(*prices, &spec.prices);
  for (size_t t = 0; t < spec.node_types.size(); ++t) {
    if (!spec.prices.device_price(spec.node_types[t].device_id)) {
      JsonReader where = sweep.has("node") ? as_list(sweep.at("node"))[t] : document.at("cluster").at("template");
      where.fail("no price for device \"" + spec.node_types[t].device_id +
                 "\": add it to hardware_profiles/prices.json or to sweep.prices.devices");
    }
  }

  // Tokens per sample: given, else the gpt zoo model's sequence.
  const Json& model = document.at("model").value();
  if (sweep.has("tokens_per_sample")) {
    spec.tokens_per_sample = static_cast<double>(sweep.at("tokens_per_sample").as_integer(1, int64_t{1} << 32));
  } else if (model.is_object() && model.value("zoo", "") == "gpt") {
    spec.tokens_per_sample = model.contains("parameters") && model["parameters"].is_object() &&
                                     model["parameters"].contains("sequence") && model["parameters"]["sequence"].is_number()
                                 ? model["parameters"]["sequence"].get<double>()
                                 : 1024.0;  // the gpt zoo's default sequence (docs/scenario-format.md)
  }
  if (auto train = sweep.find("train")) {
    train->reject_unknown_keys({"samples", "tokens"});
    if (train->has("samples") == train->has("tokens")) train->fail("give exactly one of \"samples\" or \"tokens\"");
    if (train->has("samples")) {
      spec.train_samples = positive_at_most(*train, "samples", kMaxTrainSamples);
    } else {
      if (spec.tokens_per_sample <= 0) train->at("tokens").fail("tokens need \"tokens_per_sample\" (or a gpt zoo model)");
      spec.train_samples = positive_at_most(*train, "tokens", kMaxTrainTokens) / spec.tokens_per_sample;
    }
  }
  if (auto target = sweep.find("target")) {
    target->reject_unknown_keys({"samples_per_second", "tokens_per_second", "time_to_train_seconds"});
    if (target->keys().size() != 1) {
      target->fail("give exactly one of \"samples_per_second\", \"tokens_per_second\" or \"time_to_train_seconds\"");
    }
    std::string metric = target->keys().front();
    if (metric == "tokens_per_second" && spec.tokens_per_sample <= 0) {
      target->at(metric).fail("a tokens/s target needs \"tokens_per_sample\" (or a gpt zoo model)");
    }
    if (metric == "time_to_train_seconds" && !sweep.has("train")) {
      target->at(metric).fail("a time-to-train target needs \"train\": {\"samples\": N} or {\"tokens\": N}");
    }
    const double limit = metric == "samples_per_second" ? kMaxSamplesPerSecond
                         : metric == "tokens_per_second"  ? kMaxTokensPerSecond
                                                          : kMaxTimeToTrainSeconds;
    spec.target = SweepTarget{metric, positive_at_most(*target, metric, limit)};
  }
  if (auto budget = sweep.find("budget")) {
    budget->reject_unknown_keys({"usd_per_hour", "usd_to_train"});
    if (budget->keys().empty()) budget->fail("give \"usd_per_hour\" and/or \"usd_to_train\"");
    if (budget->has("usd_per_hour")) spec.budget_usd_per_hour = positive_at_most(*budget, "usd_per_hour", kMaxUsdPerHour);
    if (budget->has("usd_to_train")) spec.budget_usd_to_train = positive_at_most(*budget, "usd_to_train", kMaxUsdToTrain);
  }
  if (auto fidelity = sweep.find("fidelity")) {
    const std::string text = fidelity->as_string();
    // "PREFIX N" with N a count of at most 7 digits; nullopt when `text` is not of that form.
    auto count_after = [&](const std::string& prefix) -> std::optional<size_t> {
      if (text.rfind(prefix, 0) != 0 || text.size() == prefix.size() || text.size() >= prefix.size() + 8 ||
          text.find_first_not_of("0123456789", prefix.size()) != std::string::npos) {
        return std::nullopt;
      }
      return std::stoul(text.substr(prefix.size()));
    };
    if (text == "analytical") {
      spec.tier = Tier::kAnalytical;
    } else if (text == "simulated") {
      spec.tier = Tier::kSimulated;
    } else if (auto recheck = count_after("analytical+recheck ")) {
      spec.tier = Tier::kAnalytical;
      spec.recheck = *recheck;
      if (spec.recheck == 0) fidelity->fail("re-check at least 1 configuration (\"analytical+recheck N\", N >= 1)");
    } else if (auto search = count_after("search ")) {
      spec.tier = Tier::kAnalytical;
      spec.search = *search;
      if (spec.search == 0) fidelity->fail("evaluate at least the best 1 configuration of the search (\"search N\", N >= 1)");
    } else {
      fidelity->fail("expected \"analytical\", \"simulated\", \"analytical+recheck N\" or \"search N\", got " +
                     brief(fidelity->value()));
    }
  }

  // Expansion (sim/sweep/sweep_spec.h), refused past kMaxConfigurations before it is built.
  SweepDimensions dimensions{devices_per_node, node_counts, fabrics, batches, precisions};
  if (configuration_count(spec, dimensions) > static_cast<size_t>(kMaxConfigurations)) {
    sweep.fail("more than " + std::to_string(kMaxConfigurations) + " configurations");
  }
  spec.configurations = expand_configurations(spec, dimensions);
  if (spec.configurations.empty()) {
    sweep.at("devices_per_node").fail("every value is larger than the nodes' accelerator count, so there is no configuration");
  }

  // The evaluations depend on the scenario and the dimensions, not on constraints or prices.
  spec.fingerprint_source = document.value();
  for (const char* key : {"target", "budget", "train", "prices", "fidelity", "tokens_per_sample"}) {
    spec.fingerprint_source["sweep"].erase(key);
  }
  spec.fingerprint_source.erase("description");
  return spec;
}

}  // namespace placesim
