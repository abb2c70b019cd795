#include "sim/graph/model_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "sim/graph/kernel_shape_json.h"

namespace placesim {
namespace {

// Beyond kMaxPlausibleFlops / kMaxPlausibleBytes (json_reader.h) a number is an input mistake, not
// a model (the largest models have ~1e25 training FLOPs).

double bounded(const JsonReader& op, const std::string& key, double limit) {
  double value = op.non_negative_or(key, 0);
  if (value > limit) {
    op.at(key).fail("value " + brief(op.at(key).value()) + " is implausibly large (limit " + brief(Json(limit)) +
                    " per op per step)");
  }
  return value;
}

Op read_op(const JsonReader& entry) {
  entry.reject_unknown_keys({"name", "type", "kind", "inputs", "forward_flops", "backward_flops", "forward_bytes",
                             "backward_bytes", "batch_statistics_bytes", "gradient_sum_bytes", "parameters", "output_shape", "output_bytes", "dtype_bytes",
                             "cpu_only", "device", "colocate_with", "layer", "kernel"});
  Op op;
  op.name = entry.string_at("name");
  if (op.name.empty()) entry.at("name").fail("op names must not be empty");
  if (op.name.front() == '^') entry.at("name").fail("op names must not start with '^' (reserved for control inputs)");
  op.type = entry.string_or("type", "Op");
  std::string kind = entry.string_or("kind", "other");
  auto parsed = parse_op_kind(kind);
  if (!parsed) {
    std::string suggestion = did_you_mean(kind, op_kind_names());
    entry.at("kind").fail("unknown op kind \"" + kind + "\"" +
                          (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
  }
  op.kind = *parsed;
  op.forward_flops = bounded(entry, "forward_flops", kMaxPlausibleFlops);
  op.backward_flops = bounded(entry, "backward_flops", kMaxPlausibleFlops);
  op.forward_bytes = bounded(entry, "forward_bytes", kMaxPlausibleBytes);
  op.backward_bytes = bounded(entry, "backward_bytes", kMaxPlausibleBytes);
  op.batch_statistics_bytes = bounded(entry, "batch_statistics_bytes", kMaxPlausibleBytes);
  if (op.batch_statistics_bytes > std::min(op.forward_bytes, op.backward_bytes)) {
    entry.at("batch_statistics_bytes")
        .fail("value " + brief(entry.at("batch_statistics_bytes").value()) +
              " exceeds the op's forward_bytes or backward_bytes, which include it");
  }
  op.gradient_sum_bytes = bounded(entry, "gradient_sum_bytes", kMaxPlausibleBytes);
  if (op.gradient_sum_bytes > op.backward_bytes) {
    entry.at("gradient_sum_bytes")
        .fail("value " + brief(entry.at("gradient_sum_bytes").value()) + " exceeds the op's backward_bytes, which include it");
  }
  op.parameter_count = bounded(entry, "parameters", kMaxPlausibleBytes);
  op.dtype_bytes = entry.positive_or("dtype_bytes", 4);
  if (op.dtype_bytes > 16) entry.at("dtype_bytes").fail("expected an element size of at most 16 bytes, got " +
                                                        brief(entry.at("dtype_bytes").value()));
  if (auto shape = entry.find("output_shape")) {
    double elements = 1;
    for (const auto& dim : shape->elements()) {
      op.output_shape.push_back(dim.as_integer(0, std::numeric_limits<int32_t>::max()));
      elements *= static_cast<double>(op.output_shape.back());
    }
    op.output_bytes = elements * op.dtype_bytes;
  }
  if (entry.has("output_bytes")) op.output_bytes = bounded(entry, "output_bytes", kMaxPlausibleBytes);
  if (op.output_bytes > kMaxPlausibleBytes) entry.at("output_shape").fail("output tensor is implausibly large");
  op.cpu_only = entry.bool_or("cpu_only", false);
  op.requested_device = entry.string_or("device", "");
  op.colocate_with = entry.string_or("colocate_with", "");
  op.layer = entry.string_or("layer", "");
  if (auto kernel = entry.find("kernel")) op.kernel = std::make_shared<const KernelShape>(read_kernel_shape(*kernel));
  return op;
}

}  // namespace

void require_acyclic(const OpGraph& graph, const std::string& file, const std::string& json_path) {
  std::vector<OpId> order;
  std::vector<std::string> cycle;
  if (graph.topological_order(&order, &cycle)) return;
  std::string names;
  for (const auto& name : cycle) names += name + " -> ";
  if (!cycle.empty()) names += cycle.front();
  throw InputError(file, json_path, "the graph has a cycle: " + names);
}

OpGraph read_model_json(const JsonReader& model) {
  model.reject_unknown_keys({"name", "description", "ops"});
  OpGraph graph(model.string_or("name", "model"));
  JsonReader ops = model.at("ops");
  std::vector<JsonReader> entries = ops.elements();
  if (entries.empty()) ops.fail("a model needs at least one op");
  for (const auto& entry : entries) {
    Op op = read_op(entry);
    if (graph.contains(op.name)) entry.at("name").fail("duplicate op name \"" + op.name + "\"");
    graph.add_op(std::move(op));
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    auto inputs = entries[i].find("inputs");
    if (!inputs) continue;
    for (const auto& input : inputs->elements()) {
      std::string name = input.as_string();
      bool control = !name.empty() && name.front() == '^';
      if (control) name = name.substr(1);
      OpId producer = graph.find(name);
      if (producer == graph.size()) {
        std::vector<std::string> names;
        for (OpId v = 0; v < graph.size(); ++v) names.push_back(graph.op(v).name);
        std::string suggestion = did_you_mean(name, names);
        input.fail("input refers to unknown op \"" + name + "\"" +
                   (suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
      }
      if (producer == i) input.fail("op \"" + name + "\" cannot be its own input");
      if (control) graph.add_control_edge(producer, i);
      else graph.add_edge(producer, i);
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const Op& op = graph.op(i);
    if (!op.colocate_with.empty() && !graph.contains(op.colocate_with)) {
      entries[i].at("colocate_with").fail("colocate_with names unknown op \"" + op.colocate_with + "\"");
    }
  }
  require_acyclic(graph, model.file(), ops.path_or_root());
  return graph;
}

OpGraph load_model_file(const std::filesystem::path& path) {
  Json document = parse_json_file(path);
  return read_model_json(JsonReader(document, path.string()));
}

Json write_model_json(const OpGraph& graph) {
  Json ops = Json::array();
  for (OpId v = 0; v < graph.size(); ++v) {
    const Op& op = graph.op(v);
    Json entry = {{"name", op.name}, {"type", op.type}, {"kind", to_string(op.kind)}};
    Json inputs = Json::array();
    for (const auto& input : graph.inputs(v)) {
      inputs.push_back((input.edge.control ? "^" : "") + graph.op(input.op).name);
    }
    if (!inputs.empty()) entry["inputs"] = inputs;
    auto put = [&](const char* key, double value) {
      if (value != 0) entry[key] = value;
    };
    put("forward_flops", op.forward_flops);
    put("backward_flops", op.backward_flops);
    put("forward_bytes", op.forward_bytes);
    put("backward_bytes", op.backward_bytes);
    put("batch_statistics_bytes", op.batch_statistics_bytes);
    put("gradient_sum_bytes", op.gradient_sum_bytes);
    put("parameters", op.parameter_count);
    entry["output_bytes"] = op.output_bytes;
    if (!op.output_shape.empty()) entry["output_shape"] = op.output_shape;
    entry["dtype_bytes"] = op.dtype_bytes;
    if (op.cpu_only) entry["cpu_only"] = true;
    if (!op.requested_device.empty()) entry["device"] = op.requested_device;
    if (!op.colocate_with.empty()) entry["colocate_with"] = op.colocate_with;
    if (!op.layer.empty()) entry["layer"] = op.layer;
    if (op.kernel) entry["kernel"] = write_kernel_shape(*op.kernel);
    ops.push_back(std::move(entry));
  }
  return Json{{"name", graph.name()}, {"ops", ops}};
}

}  // namespace placesim
