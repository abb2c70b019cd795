// ONNX model -> OpGraph: the Importer reads the model (onnx_reader.h), checks its wiring and
// windows, runs shape inference with the caller's input shapes until every tensor has one, then
// makes one op per node, costed by onnx_node_costs.h (the zoo's conventions, docs/onnx.md).
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <unordered_map>

#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/graph/fp8_gemm_roles.h"
#include "sim/graph/gradient_sums.h"
#include "sim/graph/layer_costs.h"
#include "sim/graph/onnx/onnx_attributes.h"
#include "sim/graph/onnx/onnx_dims.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/graph/onnx/onnx_node_costs.h"
#include "sim/graph/onnx/onnx_operators.h"
#include "sim/graph/onnx/onnx_reader.h"
#include "sim/graph/onnx/onnx_shapes.h"
#include "sim/graph/onnx/onnx_window_checks.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

class Importer {
 public:
  Importer(std::filesystem::path path, const OnnxImportOptions& options)
      : path_(std::move(path)), file_(path_.string()), options_(options) {}

  /// Imports the file at the constructor's path.
  OpGraph run() { return run(read_onnx_file(path_)); }

  /// Imports `bytes`, an ONNX file's contents (errors name the constructor's path).
  OpGraph run(const std::string& bytes) {
    parse_model(bytes);
    check_wiring();
    check_against_schemas();
    check_window_attributes();
    apply_input_shapes();
    prepare_value_info();
    infer_until_stable();
    check_window_shapes();
    return build_graph();
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw InputError(file_, pointer, message);
  }
  [[noreturn]] void fail_node(int index, const std::string& message) const {
    const pb::NodeProto& node = graph_->node(index);
    std::string label = node.name().empty() ? "" : " \"" + node.name() + "\"";
    fail("/graph/node/" + std::to_string(index), node.op_type() + label + ": " + message);
  }
  [[noreturn]] void fail_input_shapes(const std::string& name, const std::string& message) const {
    std::string pointer = options_.input_shapes_path.empty()
                              ? ""
                              : options_.input_shapes_path + "/" + escape_pointer_token(name);
    throw InputError(options_.input_shapes_file, pointer, message);
  }
  void warn(const std::string& message) const {
    if (options_.warnings) *options_.warnings << "placesim: warning: " << file_ << ": " << message << "\n";
  }

  void parse_model(const std::string& bytes) {
    onnx_ = parse_onnx_model(bytes, file_);
    graph_ = &onnx_.model.graph();
  }

  // Every node input is a graph input, an initializer or an earlier node's output (ONNX requires
  // topological order), and every tensor has one producer.
  void check_wiring() {
    std::set<std::string> defined;
    for (int i = 0; i < graph_->initializer_size(); ++i) {
      const auto& initializer = graph_->initializer(i);
      for (int d = 0; d < initializer.dims_size(); ++d) {
        if (initializer.dims(d) < 0) {
          fail("/graph/initializer/" + std::to_string(i) + "/dims/" + std::to_string(d),
               "initializer \"" + initializer.name() + "\" has a negative dimension " +
                   std::to_string(initializer.dims(d)));
        }
      }
      initializers_.insert(initializer.name());
      defined.insert(initializer.name());
    }
    for (const auto& sparse : graph_->sparse_initializer()) {
      initializers_.insert(sparse.values().name());
      defined.insert(sparse.values().name());
    }
    for (const auto& input : graph_->input()) defined.insert(input.name());
    std::map<std::string, int> producer;
    for (int i = 0; i < graph_->node_size(); ++i) {
      for (const auto& output : graph_->node(i).output()) {
        if (!output.empty()) producer.emplace(output, i);
      }
    }
    for (int i = 0; i < graph_->node_size(); ++i) {
      const pb::NodeProto& node = graph_->node(i);
      for (const auto& input : node.input()) {
        if (input.empty() || defined.count(input)) continue;
        auto later = producer.find(input);
        if (later == producer.end()) fail_node(i, "input \"" + input + "\" is not produced by any node, input or initializer");
        fail_node(i, "input \"" + input + "\" is produced by a later node (" + std::to_string(later->second) +
                         "); ONNX nodes must be in topological order");
      }
      for (const auto& output : node.output()) {
        if (output.empty()) continue;
        if (!defined.insert(output).second) fail_node(i, "output \"" + output + "\" is produced twice");
      }
    }
  }

  void apply_input_shapes() {
    std::map<std::string, int> data_inputs;
    for (int i = 0; i < graph_->input_size(); ++i) {
      if (!initializers_.count(graph_->input(i).name())) data_inputs.emplace(graph_->input(i).name(), i);
    }
    std::string input_list;
    for (const auto& [name, index] : data_inputs) input_list += (input_list.empty() ? "\"" : ", \"") + name + "\"";
    for (const auto& [name, shape] : options_.input_shapes) {
      if (initializers_.count(name)) fail_input_shapes(name, "\"" + name + "\" is an initializer (a weight), not an input");
      if (!data_inputs.count(name)) {
        fail_input_shapes(name, "the model has no input \"" + name + "\"; its inputs: " +
                                    (input_list.empty() ? "none" : input_list));
      }
    }
    pb::GraphProto* graph = onnx_.model.mutable_graph();
    // Given shapes first, so that their symbolic dimensions bind the others' ("N" -> 64).
    for (const auto& [name, shape] : options_.input_shapes) {
      int index = data_inputs.at(name);
      pb::TypeProto* type = graph->mutable_input(index)->mutable_type();
      if (!type->has_tensor_type()) fail_input_shapes(name, "input \"" + name + "\" is not a tensor");
      pb::TensorShapeProto* declared = type->mutable_tensor_type()->mutable_shape();
      if (type->tensor_type().has_shape() && declared->dim_size() != static_cast<int>(shape.size())) {
        fail_input_shapes(name, "input \"" + name + "\" has rank " + std::to_string(declared->dim_size()) +
                                    " in the model, got " + shape_text(shape));
      }
      for (size_t d = 0; d < shape.size(); ++d) {
        if (d < static_cast<size_t>(declared->dim_size()) && declared->dim(static_cast<int>(d)).has_dim_param()) {
          bind(declared->dim(static_cast<int>(d)).dim_param(), shape[d], name);
        }
      }
      declared->clear_dim();
      for (int64_t value : shape) declared->add_dim()->set_dim_value(value);
    }
    for (const auto& [name, index] : data_inputs) {
      if (options_.input_shapes.count(name)) continue;
      pb::ValueInfoProto* input = graph->mutable_input(index);
      if (!input->type().has_tensor_type()) {
        fail("/graph/input/" + std::to_string(index), "input \"" + name + "\" is not a tensor (sequences, maps and optionals are not supported)");
      }
      if (!input->type().tensor_type().has_shape()) {
        fail("/graph/input/" + std::to_string(index), "input \"" + name + "\" declares no shape; give it (" + where_to_give() + ")");
      }
      pb::TensorShapeProto* declared = input->mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < declared->dim_size(); ++d) {
        pb::TensorShapeProto::Dimension* dim = declared->mutable_dim(d);
        if (dim->has_dim_value() && dim->dim_value() > 0) continue;
        auto bound = dim->has_dim_param() ? bindings_.find(dim->dim_param()) : bindings_.end();
        if (bound != bindings_.end()) {
          dim->set_dim_value(bound->second);
        } else if (d == 0 && default_batch() > 0) {
          if (dim->has_dim_param()) bind(dim->dim_param(), default_batch(), name);
          dim->set_dim_value(default_batch());
        } else {
          std::string what = dim->has_dim_param() ? "symbolic dimension \"" + dim->dim_param() + "\""
                                                  : "unknown dimension";
          fail("/graph/input/" + std::to_string(index),
               "input \"" + name + "\" has a " + what + " at index " + std::to_string(d) + "; give its shape (" +
                   where_to_give() + ")");
        }
      }
    }
  }

  std::string where_to_give() const {
    return options_.input_shapes_path.empty() ? "--input NAME=D0,D1,..." : "\"inputs\": {\"NAME\": [D0, D1, ...]}";
  }

  void bind(const std::string& parameter, int64_t value, const std::string& input) {
    auto [it, inserted] = bindings_.emplace(parameter, value);
    if (!inserted && it->second != value) {
      fail_input_shapes(input, "dimension \"" + parameter + "\" is " + std::to_string(it->second) +
                                   " in another input but " + std::to_string(value) + " here");
    }
  }

  const pb::OpSchema* find_schema(const pb::NodeProto& node) const {
    auto opset = onnx_.opsets.find(node.domain() == "ai.onnx" ? "" : node.domain());
    int version = opset == onnx_.opsets.end() ? 1 : opset->second;
    return pb::OpSchemaRegistry::Schema(node.op_type(), version, node.domain());
  }
  bool has_schema(const pb::NodeProto& node) const { return find_schema(node) != nullptr; }

  void substitute_bindings(pb::TypeProto* type) const {
    if (!type->has_tensor_type() || !type->tensor_type().has_shape()) return;
    for (auto& dim : *type->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_param()) continue;
      auto bound = bindings_.find(dim.dim_param());
      if (bound != bindings_.end()) dim.set_dim_value(bound->second);
    }
  }

  // Declared shapes of tensors ONNX can infer are dropped (they may hold another batch size);
  // those of operators without a schema (custom domains) are kept, with bound dimensions filled in.
  void prepare_value_info() {
    std::set<std::string> uninferable;
    for (const auto& node : graph_->node()) {
      if (!has_schema(node)) uninferable.insert(node.output().begin(), node.output().end());
    }
    pb::GraphProto* graph = onnx_.model.mutable_graph();
    google::protobuf::RepeatedPtrField<pb::ValueInfoProto> kept;
    for (auto& info : *graph->mutable_value_info()) {
      if (!uninferable.count(info.name())) continue;
      substitute_bindings(info.mutable_type());
      *kept.Add() = info;
    }
    graph->mutable_value_info()->Swap(&kept);
    for (auto& output : *graph->mutable_output()) {
      if (uninferable.count(output.name())) {
        substitute_bindings(output.mutable_type());
      } else if (output.type().has_tensor_type()) {
        output.mutable_type()->mutable_tensor_type()->clear_shape();
      }
    }
  }

  void infer_shapes() {
    std::string error = infer_in_child_process(onnx_.model, /*error_mode=*/1);
    if (error.empty()) return;
    explain_inference_failure();
    fail("/graph", "ONNX shape inference failed: " + error.substr(0, 600));
  }

  // Every node of an operator ONNX defines has the inputs, outputs and attributes its definition
  // requires (OpSchema::Verify, as ONNX's checker does): shape inference assumes so and reads
  // through null pointers otherwise (a Scan without num_scan_inputs: SIGSEGV, found by the fuzzer).
  void check_against_schemas() const {
    for (int i = 0; i < graph_->node_size(); ++i) {
      const pb::NodeProto& node = graph_->node(i);
      const pb::OpSchema* schema = find_schema(node);
      if (!schema) continue;
      try {
        schema->Verify(node);
      } catch (const std::exception& error) {
        std::string message = error.what();
        if (size_t end = message.find("\n==>"); end != std::string::npos) message.resize(end);
        fail_node(i, "does not match ONNX's definition of " + node.op_type() + " (opset " +
                         std::to_string(schema->SinceVersion()) + "): " + message.substr(0, 400));
      }
    }
  }

  // Convolutions and pooling windows with attributes ONNX would divide by or compute nonsense
  // from (onnx_window_checks.h) are refused before shape inference runs.
  void check_window_attributes() const {
    for (int i = 0; i < graph_->node_size(); ++i) {
      const pb::NodeProto& node = graph_->node(i);
      if (!is_window_operator(node)) continue;
      if (std::string problem = window_attribute_problem(node); !problem.empty()) fail_node(i, problem);
    }
  }

  // The same nodes against their inferred input shapes: ranks, channels and groups, output sizes.
  void check_window_shapes() const {
    for (int i = 0; i < graph_->node_size(); ++i) {
      const pb::NodeProto& node = graph_->node(i);
      if (!is_window_operator(node) || node.input_size() == 0) continue;
      const TensorInfo* x = find_tensor(node.input(0));
      if (!x || !x->known) continue;  // the importer reports unknown shapes when it costs the node
      const int weight = window_weight_input(node);
      const TensorInfo* w = weight >= 0 && weight < node.input_size() ? find_tensor(node.input(weight)) : nullptr;
      const std::vector<int64_t>* w_dims = w && w->known ? &w->dims : nullptr;
      if (std::string problem = window_shape_problem(node, x->dims, w_dims); !problem.empty()) fail_node(i, problem);
    }
  }

  // When strict inference stops, a window node with impossible shapes upstream (a rank-1 weight
  // makes a rank-2 output that a later node rejects) is the better explanation: lenient inference
  // on a copy finds what shapes it can, and the window checks run on them.
  void explain_inference_failure() {
    pb::ModelProto copy = onnx_.model;
    if (!infer_in_child_process(copy, /*error_mode=*/0).empty()) return;
    tensors_ = tensor_infos(copy.graph());
    check_window_shapes();
  }

  // ONNX cannot infer through operators it has no schema for; placesim assumes such a node's
  // outputs have its first input's shape and infers again downstream.
  void infer_until_stable() {
    for (int round = 0; round <= graph_->node_size(); ++round) {
      infer_shapes();
      tensors_ = tensor_infos(*graph_);
      bool assumed = false;
      for (int i = 0; i < graph_->node_size(); ++i) {
        const pb::NodeProto& node = graph_->node(i);
        if (node.domain() == kPlacesimOnnxDomain || node.input_size() == 0) continue;
        const TensorInfo* first = find_tensor(node.input(0));
        if (!first || !first->known) continue;
        TensorInfo assumed_output = *first;
        if (node.op_type() == "Einsum" && node.domain().empty()) {
          std::vector<std::vector<int64_t>> shapes;
          for (const auto& input : node.input()) {
            const TensorInfo* info = find_tensor(input);
            if (info && info->known) shapes.push_back(info->dims);
          }
          if (!einsum_output_shape(string_attribute(node, "equation", ""), shapes, &assumed_output.dims)) continue;
        } else if (has_schema(node)) {
          continue;
        }
        for (const auto& output : node.output()) {
          if (output.empty() || (tensors_.count(output) && tensors_[output].known)) continue;
          pb::ValueInfoProto* info = onnx_.model.mutable_graph()->add_value_info();
          info->set_name(output);
          auto* type = info->mutable_type()->mutable_tensor_type();
          type->set_elem_type(first->element_type);
          for (int64_t dim : assumed_output.dims) type->mutable_shape()->add_dim()->set_dim_value(dim);
          tensors_[output] = assumed_output;
          tensors_[output].constant = false;
          tensors_[output].initializer = false;
          if (!has_schema(node)) assumed_shapes_.insert(node.op_type());
          assumed = true;
        }
      }
      if (!assumed) return;
    }
  }

  const TensorInfo* find_tensor(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }

  // A tensor a node reads or writes, with its shape checked and its size bounded.
  const TensorInfo& tensor(int node_index, const std::string& name) const {
    const TensorInfo* info = find_tensor(name);
    if (!info || !info->known) {
      std::string shape = info ? " (inferred " + shape_text(info->dims) + ", -1 = unknown)" : "";
      fail_node(node_index, "the shape of tensor \"" + name + "\" is unknown after shape inference" + shape +
                                "; it depends on input values (not only shapes) or on input shapes not given");
    }
    if (dims_product(info->dims) * 8 > kMaxPlausibleBytes) {
      fail_node(node_index, "tensor \"" + name + "\" " + shape_text(info->dims) +
                                " is implausibly large (more than 1e16 bytes)");
    }
    return *info;
  }

  double element_bytes(const TensorInfo& info) const { return placesim::element_bytes(info, options_.dtype_bytes); }
  double bytes(const TensorInfo& info) const { return tensor_bytes(info, options_.dtype_bytes); }

  OpGraph build_graph();
  std::map<int, int> find_dense_bias_adds() const;
  PlacesimNodeScale placesim_node_scale() const;
  double claim_parameters(int index, const std::string& input);
  class NodeContext;

  std::filesystem::path path_;
  std::string file_;
  const OnnxImportOptions& options_;
  OnnxModelProto onnx_;
  const pb::GraphProto* graph_ = nullptr;

  // The batch of a symbolic first dimension: the exported one when the options prefer it and the
  // file records a plausible one (a positive integer no larger than 2^32), else the caller's.
  int64_t default_batch() const {
    auto exported = onnx_.metadata.find("placesim.batch");
    if (!options_.batch_from_metadata || exported == onnx_.metadata.end()) return options_.default_batch;
    const std::string& text = exported->second;
    if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) {
      return options_.default_batch;
    }
    const int64_t batch = std::stoll(text);
    return batch >= 1 && batch <= (int64_t{1} << 32) ? batch : options_.default_batch;
  }
  std::set<std::string> initializers_;
  std::map<std::string, int64_t> bindings_;
  std::unordered_map<std::string, TensorInfo> tensors_;
  std::set<std::string> counted_parameters_;
  std::set<std::string> assumed_shapes_;
  std::map<std::string, int> unknown_operators_;
};

// Trainable parameters: floating-point initializers of more than one element, each counted once
// (at its first consumer, so tied weights count once), except batch norm's running statistics.
double Importer::claim_parameters(int index, const std::string& input) {
  const TensorInfo* info = find_tensor(input);
  if (!info || !info->initializer || !is_float_type(info->element_type)) return 0;
  double elements = dims_product(tensor(index, input).dims);
  if (elements <= 1 || !counted_parameters_.insert(input).second) return 0;
  return elements;
}

// The importer as costing node `index` sees it: its tensors, parameters and errors name the node.
class Importer::NodeContext final : public NodeCostContext {
 public:
  NodeContext(Importer& importer, int index) : importer_(importer), index_(index) {}
  const TensorInfo& tensor(const std::string& name) const override { return importer_.tensor(index_, name); }
  const TensorInfo* find_tensor(const std::string& name) const override { return importer_.find_tensor(name); }
  double claim_parameters(const std::string& name) override { return importer_.claim_parameters(index_, name); }
  void unknown_operator(const std::string& type) override {
    ++importer_.unknown_operators_[type];
    if (importer_.options_.strict) {
      fail("unsupported operator \"" + type + "\" (strict mode refuses operators placesim cannot cost; see docs/onnx.md)");
    }
  }
  double float_bytes() const override { return importer_.options_.dtype_bytes; }
  [[noreturn]] void fail(const std::string& message) const override { importer_.fail_node(index_, message); }

 private:
  Importer& importer_;
  int index_;
};

std::string layer_of(const std::string& name) {
  std::string trimmed = name;
  while (!trimmed.empty() && trimmed.front() == '/') trimmed.erase(trimmed.begin());
  size_t slash = trimmed.rfind('/');
  return slash == std::string::npos ? "" : trimmed.substr(0, slash);
}

// A MatMul by a weight whose only consumer adds a bias vector is one dense layer (PyTorch's
// Linear on 3-D inputs exports so); the bias add is fused and not counted, as the zoo does.
std::map<int, int> Importer::find_dense_bias_adds() const {
  std::unordered_map<std::string, std::vector<int>> consumers;
  for (int i = 0; i < graph_->node_size(); ++i) {
    for (const auto& input : graph_->node(i).input()) {
      if (!input.empty()) consumers[input].push_back(i);
    }
  }
  for (const auto& output : graph_->output()) consumers[output.name()].push_back(-1);
  auto float_initializer = [&](const std::string& name, size_t rank) {
    const TensorInfo* info = find_tensor(name);
    return info && info->initializer && is_float_type(info->element_type) && info->dims.size() == rank;
  };
  std::map<int, int> fused;
  for (int i = 0; i < graph_->node_size(); ++i) {
    const pb::NodeProto& node = graph_->node(i);
    if (node.op_type() != "MatMul" || !node.domain().empty() || node.input_size() != 2 || node.output_size() != 1) continue;
    if (!float_initializer(node.input(1), 2) || float_initializer(node.input(0), 2)) continue;
    const auto& users = consumers[node.output(0)];
    if (users.size() != 1 || users[0] < 0) continue;
    const pb::NodeProto& add = graph_->node(users[0]);
    if (add.op_type() != "Add" || !add.domain().empty() || add.input_size() != 2) continue;
    const std::string& bias = add.input(0) == node.output(0) ? add.input(1) : add.input(0);
    if (!float_initializer(bias, 1)) continue;
    if (find_tensor(bias)->dims[0] != find_tensor(node.input(1))->dims[1]) continue;
    fused[i] = users[0];
  }
  return fused;
}

// Costs of ai.placesim nodes scale with the bound batch N over the exported one and with the
// import's element size over the exported one.
PlacesimNodeScale Importer::placesim_node_scale() const {
  PlacesimNodeScale scale;
  auto exported_batch = onnx_.metadata.find("placesim.batch");
  auto bound_batch = bindings_.find("N");
  if (exported_batch != onnx_.metadata.end() && bound_batch != bindings_.end()) {
    scale.batch = static_cast<double>(bound_batch->second) / std::max(1.0, std::strtod(exported_batch->second.c_str(), nullptr));
  }
  auto exported_dtype = onnx_.metadata.find("placesim.dtype_bytes");
  if (exported_dtype != onnx_.metadata.end()) {
    double exported = std::strtod(exported_dtype->second.c_str(), nullptr);
    if (exported > 0) scale.bytes = options_.dtype_bytes / exported;
  }
  scale.dtype_bytes = options_.dtype_bytes;
  return scale;
}

OpGraph Importer::build_graph() {
  std::string name = graph_->name().empty() ? path_.stem().string() : graph_->name();
  OpGraph graph(name);
  auto unique = [&](std::string candidate) {
    if (candidate.empty()) candidate = "node";
    std::string result = candidate;
    for (int k = 1; graph.contains(result); ++k) result = candidate + "_" + std::to_string(k);
    return result;
  };
  std::unordered_map<std::string, OpId> producer;
  for (int i = 0; i < graph_->input_size(); ++i) {
    const std::string& input = graph_->input(i).name();
    if (initializers_.count(input)) continue;
    const TensorInfo* info = find_tensor(input);
    if (!info || !info->known) fail("/graph/input/" + std::to_string(i), "input \"" + input + "\" has no known shape");
    if (dims_product(info->dims) * 8 > kMaxPlausibleBytes) {
      fail("/graph/input/" + std::to_string(i), "input \"" + input + "\" " + shape_text(info->dims) +
                                                    " is implausibly large (more than 1e16 bytes)");
    }
    Op op;
    op.name = unique(input);
    op.type = "Placeholder";
    op.kind = OpKind::kDataMovement;
    op.output_shape = info->dims;
    op.output_bytes = bytes(*info);
    op.dtype_bytes = element_bytes(*info);
    op.forward_bytes = op.output_bytes;  // written once, no backward (as the zoo's inputs)
    op.layer = layer_of(input);
    producer[input] = graph.add_op(std::move(op));
  }
  const PlacesimNodeScale placesim_scale = placesim_node_scale();
  std::map<int, int> dense_bias = find_dense_bias_adds();
  std::set<int> fused_adds;
  for (const auto& [matmul, add] : dense_bias) fused_adds.insert(add);
  for (int i = 0; i < graph_->node_size(); ++i) {
    const pb::NodeProto& node = graph_->node(i);
    if (fused_adds.count(i) || (node.op_type() == "Constant" && node.domain().empty())) continue;
    const bool placesim_node = node.domain() == kPlacesimOnnxDomain;
    auto fused = dense_bias.find(i);
    const pb::NodeProto& last = fused == dense_bias.end() ? node : graph_->node(fused->second);
    std::vector<std::string> outputs;
    for (const auto& output : last.output()) {
      if (!output.empty()) outputs.push_back(output);
    }
    if (outputs.empty() && !placesim_node) continue;  // nothing reads what it computes
    Op op;
    op.name = unique(node.name().empty() ? outputs.front() : node.name());
    op.layer = layer_of(op.name);
    NodeContext context(*this, i);
    if (placesim_node) {
      cost_placesim_node(node, placesim_scale, context, op);
    } else {
      cost_onnx_node(node, outputs, context, op);
    }
    if (fused != dense_bias.end()) {
      const std::string& bias = last.input(0) == node.output(0) ? last.input(1) : last.input(0);
      op.parameter_count += claim_parameters(i, bias);
      op.forward_bytes += bytes(tensor(i, bias));
      op.backward_bytes = backward_bytes(op.forward_bytes);
    }
    OpId id = graph.add_op(std::move(op));
    std::vector<std::pair<OpId, double>> edges;
    const pb::AttributeProto* input_bytes = placesim_node ? find_attribute(node, "input_bytes") : nullptr;
    for (int k = 0; k < node.input_size(); ++k) {
      auto from = producer.find(node.input(k));
      if (node.input(k).empty() || from == producer.end()) continue;
      double edge_bytes = 0;
      if (input_bytes && k < input_bytes->strings_size()) {
        edge_bytes = std::strtod(input_bytes->strings(k).c_str(), nullptr);
      } else if (const TensorInfo* info = find_tensor(node.input(k)); info && info->known) {
        edge_bytes = bytes(*info);
      } else {
        edge_bytes = graph.op(from->second).output_bytes;
      }
      auto same = std::find_if(edges.begin(), edges.end(), [&](const auto& e) { return e.first == from->second; });
      if (same == edges.end()) edges.emplace_back(from->second, edge_bytes);
      else same->second += edge_bytes;
    }
    for (const auto& [from, edge_bytes] : edges) graph.add_edge(from, id, edge_bytes);
    if (const pb::AttributeProto* control = placesim_node ? find_attribute(node, "control_inputs") : nullptr) {
      for (const auto& before : control->strings()) {
        OpId from = graph.find(before);
        if (from == graph.size()) fail_node(i, "control input \"" + before + "\" names no earlier op");
        graph.add_control_edge(from, id);
      }
    }
    for (const auto& output : outputs) producer[output] = id;
  }
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    if (!op.colocate_with.empty() && !graph.contains(op.colocate_with)) {
      fail("/graph", "op \"" + op.name + "\" is colocated with unknown op \"" + op.colocate_with + "\"");
    }
  }
  if (!unknown_operators_.empty()) {
    std::string list;
    int total = 0;
    for (const auto& [type, count] : unknown_operators_) {
      list += (list.empty() ? "" : ", ") + type + " x" + std::to_string(count);
      total += count;
    }
    warn(std::to_string(total) + " node(s) of operators placesim cannot cost were costed as memory-bound (0 FLOPs, "
         "inputs + outputs bytes): " + list + "; strict mode refuses them");
  }
  if (!assumed_shapes_.empty()) {
    std::string list;
    for (const auto& type : assumed_shapes_) list += (list.empty() ? "" : ", ") + type;
    warn("ONNX has no shape inference for " + list + "; their outputs were given their first input's shape");
  }
  add_gradient_sums(graph);
  infer_fp8_gemm_roles(graph);
  return graph;
}

}  // namespace

bool onnx_support_available() { return true; }

OpGraph import_onnx_model(const std::filesystem::path& path, const OnnxImportOptions& options) {
  return Importer(path, options).run();
}

OpGraph import_onnx_bytes(const std::string& bytes, const std::string& file, const OnnxImportOptions& options) {
  return Importer(file, options).run(bytes);
}
}  // namespace placesim
