#include "sim/scenario/scenario_loader.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "models/zoo.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/cluster/precision_support.h"
#include "sim/graph/model_json.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/core/atomic_file.h"
#include "sim/scenario/convergence_reader.h"
#include "sim/scenario/perturbations.h"
#include "sim/scenario/plan_fit.h"
#include "sim/scenario/scenario_parts.h"
#include "sim/scenario/scenario_keys.h"
#include "sim/scenario/strategy_reader.h"

namespace placesim {
namespace {

constexpr int64_t kMaxSteps = 1000000;
constexpr int64_t kMaxBatch = int64_t{1} << 32;

// An ONNX file, imported with the scenario's input shapes and precision (docs/onnx.md).
OpGraph read_onnx_model(const JsonReader& model, const RunOptions& run, const std::filesystem::path& base_directory) {
  std::filesystem::path path = model.string_at("onnx");
  if (path.is_relative()) path = base_directory / path;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) model.at("onnx").fail("no such file: " + path.string());
  OnnxImportOptions options;
  options.input_shapes_file = model.file();
  options.input_shapes_path = model.path() + "/inputs";
  if (auto inputs = model.find("inputs")) {
    inputs->expect_object();
    for (const auto& name : inputs->keys()) {
      std::vector<int64_t>& shape = options.input_shapes[name];
      for (const auto& dim : inputs->at(name).elements()) shape.push_back(dim.as_integer(1, kMaxBatch));
    }
  }
  options.default_batch = run.batch_size;
  options.dtype_bytes = element_bytes(run.precision);
  options.strict = model.bool_or("strict", false);
  options.warnings = &std::cerr;
  return import_onnx_model(path, options);
}

OpGraph read_model(const JsonReader& model, const RunOptions& run, const std::filesystem::path& base_directory) {
  model.reject_unknown_keys({"zoo", "parameters", "file", "graph", "onnx", "inputs", "strict"});
  int sources = (model.has("zoo") ? 1 : 0) + (model.has("file") ? 1 : 0) + (model.has("graph") ? 1 : 0) +
                (model.has("onnx") ? 1 : 0);
  if (sources != 1) model.fail("give exactly one of \"zoo\", \"file\", \"graph\" or \"onnx\"");
  for (const char* key : {"inputs", "strict"}) {
    if (model.has(key) && !model.has("onnx")) model.at(key).fail(std::string("\"") + key + "\" applies to onnx models only");
  }
  if (model.has("onnx")) return read_onnx_model(model, run, base_directory);
  if (model.has("parameters") && !model.has("zoo")) model.at("parameters").fail("\"parameters\" applies to zoo models only");
  if (model.has("zoo")) {
    static const Json kEmptyObject = Json::object();
    JsonReader parameters = model.has("parameters") ? model.at("parameters") : JsonReader(kEmptyObject, model.file(), model.path() + "/parameters");
    parameters.expect_object();
    return build_zoo_model(model.at("zoo"), parameters, run.batch_size,
                           element_bytes(run.precision));
  }
  if (model.has("graph")) return read_model_json(model.at("graph"));
  std::filesystem::path path = model.string_at("file");
  if (path.is_relative()) path = base_directory / path;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) model.at("file").fail("no such file: " + path.string());
  return load_model_file(path);
}

RunOptions read_run(const JsonReader& run) {
  run.reject_unknown_keys(scenario_keys::kRun);
  RunOptions options;
  options.kind = run.choice_or("mode", {"training", "inference"}, "training") == "training" ? StepKind::kTraining
                                                                                            : StepKind::kInference;
  options.steps = run.integer_or("steps", 1, 1, kMaxSteps);
  options.batch_size = run.integer_or("batch_size", 1, 1, kMaxBatch);
  options.precision = *parse_precision(run.choice_or("precision", precision_names(), "fp32"));
  options.memory_format = *parse_memory_format(run.choice_or("memory_format", memory_format_names(), "nchw"));
  options.seed = static_cast<uint64_t>(run.integer_or("seed", 1, 0));
  options.optimizer = *parse_optimizer(run.choice_or("optimizer", optimizer_names(), "sgd"));
  if (auto fetch = run.find("fetch")) {
    for (const auto& name : fetch->elements()) options.fetch.push_back(name.as_string());
  }
  options.log_device_placement = run.bool_or("log_device_placement", false);
  options.tensorflow_version = *parse_tensorflow_version(
      run.choice_or("tensorflow_version", tensorflow_version_names(), to_string(TensorFlowVersion{})));
  options.recompute = run.bool_or("recompute", false);
  options.fp32_gradients = run.bool_or("fp32_gradients", false);
  return options;
}

// The "simulation" block: fidelity choices that trade exactness for speed (docs/performance.md).
void read_simulation(const JsonReader& simulation, RunOptions* run) {
  simulation.reject_unknown_keys(scenario_keys::kSimulation);
  run->tier = *parse_tier(simulation.choice_or("tier", {"simulated", "analytical", "closed-form"}, "simulated"));
  run->collective_fidelity =
      *parse_collective_fidelity(simulation.choice_or("collectives", {"per-phase", "per-round"}, "per-phase"));
  run->symmetry = simulation.choice_or("symmetry", {"off", "representatives"}, "off") == "representatives";
  run->gpu_spread = simulation.choice_or("gpu_spread", {"measured", "none"}, "measured") == "measured";
  if (run->symmetry && run->collective_fidelity == CollectiveFidelity::kPerRound) {
    simulation.at("symmetry").fail("symmetry simulates one hop of each ring all-reduce per phase; it cannot be "
                                   "combined with \"collectives\": \"per-round\"");
  }
}

}  // namespace

// Errors about an op's own "device" point into the inline graph or the model file.
void locate_graph_ops(const JsonReader& model, const std::filesystem::path& base_directory, Scenario* scenario) {
  if (model.has("graph")) {
    scenario->graph_ops_path = model.path() + "/graph/ops";
  } else if (model.has("file")) {
    std::filesystem::path path = model.string_at("file");
    scenario->graph_file = (path.is_relative() ? base_directory / path : path).string();
    scenario->graph_ops_path = "/ops";
  }
}

RunOptions read_run_options(const JsonReader& document) {
  static const Json kEmptyObject = Json::object();
  RunOptions run = read_run(document.has("run") ? document.at("run") : JsonReader(kEmptyObject, document.file(), "/run"));
  if (auto simulation = document.find("simulation")) read_simulation(*simulation, &run);
  return run;
}

OpGraph build_model_graph(const JsonReader& model, const RunOptions& run, const std::filesystem::path& base_directory,
                          ScenarioReuse* reuse) {
  return reused(
      reuse ? &reuse->graphs : nullptr,
      [&] { return model.value().dump() + "|" + std::to_string(run.batch_size) + "|" + to_string(run.precision); },
      [&] { return read_model(model, run, base_directory); }, [](const OpGraph& graph) { return graph.size(); });
}

void require_fetched_ops_exist(const JsonReader& document, const Scenario& scenario) {
  for (size_t i = 0; i < scenario.run.fetch.size(); ++i) {
    if (!scenario.graph.contains(scenario.run.fetch[i])) {
      document.at("run").at("fetch").at_index(i).fail("fetch names unknown op \"" + scenario.run.fetch[i] + "\"");
    }
  }
}

namespace {

// Maps a plan-size refusal to strategy `i` of the document: the steps, else the replicas' key,
// else the model.
void fail_plan_too_large(const JsonReader& document, size_t i, const std::optional<PlanTooLarge>& refusal) {
  if (!refusal) return;
  if (refusal->blame == PlanTooLarge::kSteps) document.at("run").at("steps").fail(refusal->message);
  if (refusal->blame == PlanTooLarge::kReplicas) {
    JsonReader entry = document.has("strategies") ? document.at("strategies").at_index(i) : document.at("strategy");
    if (refusal->key == "pipeline") entry.at("pipeline").at("micro_batches").fail(refusal->message);
    if (refusal->key == "parallelism") entry.at("parallelism").fail(refusal->message);
    entry.at("data_parallel").at("replicas").fail(refusal->message);
  }
  document.at("model").fail(refusal->message);
}

// Refuses a strategy whose plan would not fit in this machine (plan_size.h) before any plan is
// built.
void require_plans_fit(const JsonReader& document, const Scenario& scenario) {
  for (size_t i = 0; i < scenario.strategies.size(); ++i) {
    fail_plan_too_large(document, i, plan_too_large(scenario, scenario.strategies[i]));
  }
}

// The same refusal for data-parallel strategies from the scenario's text alone, before any cluster
// is built (plan_too_large_before_cluster). Values of the wrong type are left to the strategy
// reader's errors.
void require_replicas_fit_before_cluster(const JsonReader& document, const Scenario& scenario) {
  std::vector<JsonReader> entries;
  if (auto list = document.find("strategies"); list && list->value().is_array()) {
    entries = list->elements();
  } else if (auto single = document.find("strategy")) {
    entries.push_back(*single);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const Json& entry = entries[i].value();
    if (!entry.is_object() || !entry.contains("data_parallel") || !entry["data_parallel"].is_object()) continue;
    const Json& dp = entry["data_parallel"];
    if (!dp.contains("replicas")) continue;
    const Json& replicas_value = dp["replicas"];
    double replicas = 0;
    if (replicas_value.is_array()) {
      replicas = static_cast<double>(replicas_value.size());
    } else if (replicas_value.is_number_unsigned()) {
      replicas = static_cast<double>(replicas_value.get<uint64_t>());
    } else {
      continue;
    }
    const bool asynchronous = dp.contains("mode") && dp["mode"] == "async";
    const bool all_reduce = dp.contains("aggregation") ? dp["aggregation"] == "allreduce" : !asynchronous;
    std::optional<CollectiveAlgorithm> algorithm;
    if (dp.contains("algorithm") && dp["algorithm"].is_string()) {
      algorithm = parse_collective_algorithm(dp["algorithm"].get<std::string>());
    }
    std::optional<Framework> framework;  // the reader's default, "links", when absent or unknown
    if (dp.contains("framework") && dp["framework"].is_string()) {
      framework = parse_framework(dp["framework"].get<std::string>());
    }
    double bucket_bytes = default_bucket_bytes(framework.value_or(Framework::kLinksOnly));
    if (dp.contains("bucket_bytes") && dp["bucket_bytes"].is_number() && dp["bucket_bytes"].get<double>() >= 1) {
      bucket_bytes = dp["bucket_bytes"].get<double>();
    }
    fail_plan_too_large(document, i,
                        plan_too_large_before_cluster(scenario.graph, scenario.run, replicas, all_reduce, algorithm, bucket_bytes));
  }
}

// Refuses a precision some device of the scenario's clusters cannot run (fp8 without an fp8 peak),
// at /run/precision, before any plan is built.
void require_precision_supported(const JsonReader& document, const Scenario& scenario) {
  std::vector<const Cluster*> clusters = {&scenario.cluster};
  for (const Strategy& strategy : scenario.strategies) clusters.push_back(&scenario.cluster_for(strategy));
  for (const Cluster* cluster : clusters) {
    const std::string reason = precision_unsupported_reason(*cluster, scenario.run.precision);
    if (!reason.empty()) document.at("run").at("precision").fail(reason);
  }
}

}  // namespace

Scenario read_scenario(const JsonReader& document, const HardwareCatalog& catalog,
                       const std::filesystem::path& base_directory, ScenarioReuse* reuse) {
  document.reject_unknown_keys(scenario_keys::kTopLevel);
  Scenario scenario;
  scenario.file = document.file();
  scenario.name = document.string_or("name", std::filesystem::path(document.file()).stem().string());
  scenario.description = document.string_or("description", "");
  scenario.run = read_run_options(document);
  scenario.graph = build_model_graph(document.at("model"), scenario.run, base_directory, reuse);
  require_fetched_ops_exist(document, scenario);
  require_replicas_fit_before_cluster(document, scenario);
  scenario.cluster = reused(
      reuse ? &reuse->clusters : nullptr,
      [&] { return document.at("cluster").value().dump(); },
      [&] { return build_cluster(document.at("cluster"), catalog, base_directory); },
      [](const Cluster& cluster) { return cluster.devices().size(); });
  std::optional<Perturbations> perturbations;
  if (auto given = document.find("perturbations")) perturbations = read_perturbations(*given);
  if (perturbations) apply_perturbations(*perturbations, &scenario.cluster, &scenario.run);
  auto read_cluster = [&](const JsonReader& description) {
    Cluster cluster = build_cluster(description, catalog, base_directory);
    RunOptions ignored;
    if (perturbations) apply_perturbations(*perturbations, &cluster, &ignored);
    return cluster;
  };
  scenario.strategies = read_strategies(document, scenario.cluster, read_cluster, &scenario.strategy_sources);
  locate_graph_ops(document.at("model"), base_directory, &scenario);
  require_precision_supported(document, scenario);
  require_plans_fit(document, scenario);
  if (auto outputs = document.find("outputs")) {
    outputs->reject_unknown_keys(scenario_keys::kOutputs);
    scenario.trace_path = outputs->string_or("trace", "");
    scenario.report_path = outputs->string_or("report", "");
  }
  if (auto convergence = document.find("convergence")) scenario.convergence = read_convergence(*convergence, scenario);
  return scenario;
}

Scenario load_scenario(const std::filesystem::path& path, const HardwareCatalog& catalog) {
  Json document = parse_json_file(path);
  JsonReader reader(document, path.string());
  reader.expect_object();
  return read_scenario(reader, catalog, path.parent_path());
}

std::string scenario_output_path(const std::string& value, const std::filesystem::path& scenario_file,
                                 const std::string& json_path, bool allow_outside) {
  namespace fs = std::filesystem;
  if (value.empty() || is_standard_output(value)) return value;
  fs::path given(value);
  fs::path directory = scenario_file.parent_path();
  fs::path resolved = given.is_absolute() ? given : directory / given;
  if (allow_outside) return resolved.string();
  bool leaves = given.is_absolute();
  for (const auto& part : given) leaves = leaves || part == "..";
  if (!leaves) {  // a linked directory inside the scenario's may lead anywhere
    std::error_code base_error, target_error;
    fs::path base = fs::weakly_canonical(directory.empty() ? fs::path(".") : directory, base_error);
    fs::path parent = resolved.parent_path();
    fs::path target = fs::weakly_canonical(parent.empty() ? fs::path(".") : parent, target_error);
    if (!base_error && !target_error) {
      auto [in_base, in_target] = std::mismatch(base.begin(), base.end(), target.begin(), target.end());
      leaves = in_base != base.end();
    }
  }
  if (leaves) {
    throw InputError(scenario_file.string(), json_path,
                     "\"" + value + "\" is outside the scenario's directory \"" +
                         (directory.empty() ? std::string(".") : directory.string()) +
                         "\": a scenario writes only there (give --report/--trace, or --allow-outside-outputs if you "
                         "trust the scenario)");
  }
  return resolved.string();
}

}  // namespace placesim
