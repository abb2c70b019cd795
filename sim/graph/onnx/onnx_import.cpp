// ONNX model -> OpGraph: shape inference with the caller's input shapes, then one op per node
// costed by the zoo's conventions (docs/model-graphs.md; the formulas are listed in docs/onnx.md).
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <set>
#include <sstream>
#include <unordered_map>

#include "sim/core/fd_io.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/graph/onnx/onnx_dims.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/graph/onnx/onnx_operators.h"
#include "sim/graph/onnx/onnx_window_checks.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

// protobuf cannot parse a message of 2 GiB or more; larger models keep their weights outside.
constexpr std::uintmax_t kMaxFileBytes = (std::uintmax_t{1} << 31) - 1;
// Same limit as model graph files (sim/graph/model_json.cpp): beyond it a tensor is a mistake.
constexpr double kMaxPlausibleBytes = 1e16;
constexpr double kNormalizationFlopsPerElement = 5;  // as models/layer_builder.cpp
constexpr double kSoftmaxFlopsPerElement = 5;
constexpr double kCrossEntropyFlopsPerLogit = 6;

struct TensorInfo {
  int32_t element_type = 0;
  std::vector<int64_t> dims;
  bool known = false;     ///< every dimension has a value
  bool constant = false;  ///< an initializer or a Constant node's output
  bool initializer = false;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  return text.str() + "]";
}

bool is_float_type(int32_t type) {
  switch (type) {
    case pb::TensorProto::FLOAT:
    case pb::TensorProto::FLOAT16:
    case pb::TensorProto::BFLOAT16:
    case pb::TensorProto::DOUBLE:
    case pb::TensorProto::UNDEFINED:
      return true;
    default:
      return false;
  }
}

double integer_type_bytes(int32_t type) {
  switch (type) {
    case pb::TensorProto::INT8:
    case pb::TensorProto::UINT8:
    case pb::TensorProto::BOOL:
      return 1;
    case pb::TensorProto::INT16:
    case pb::TensorProto::UINT16:
      return 2;
    case pb::TensorProto::INT32:
    case pb::TensorProto::UINT32:
      return 4;
    default:
      return 8;  // INT64, UINT64, strings (a pointer each), complex
  }
}


const pb::AttributeProto* find_attribute(const pb::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

std::string string_attribute(const pb::NodeProto& node, const std::string& name, const std::string& fallback) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  return attribute ? attribute->s() : fallback;
}

int64_t int_attribute(const pb::NodeProto& node, const std::string& name, int64_t fallback) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  return attribute ? attribute->i() : fallback;
}

/// An attribute's integers, or `fallback` when absent.
std::vector<int64_t> ints_attribute(const pb::NodeProto& node, const std::string& name, std::vector<int64_t> fallback) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  if (!attribute || attribute->ints_size() == 0) return fallback;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

/// The kernel shape of a 2-D Conv, Gemm or MatMul whose shapes are all known (sim/graph/kernel_shape.h);
/// null for anything else (other ranks, asymmetric padding, auto_pad that the shapes contradict).
std::shared_ptr<const KernelShape> onnx_kernel_shape(const pb::NodeProto& node, const std::string& type,
                                                     const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                                     const std::vector<int64_t>& out) {
  auto positive = [](const std::vector<int64_t>& dims) {
    for (int64_t d : dims) {
      if (d < 1 || d > (1ll << 31)) return false;
    }
    return !dims.empty();
  };
  if (!positive(a) || !positive(b) || !positive(out)) return nullptr;
  if (type == "Conv" && a.size() == 4 && b.size() == 4 && out.size() == 4) {
    Conv2dShape conv;
    conv.n = a[0], conv.c = a[1], conv.h = a[2], conv.w = a[3], conv.k = b[0], conv.r = b[2], conv.s = b[3];
    auto strides = ints_attribute(node, "strides", {1, 1});
    auto dilations = ints_attribute(node, "dilations", {1, 1});
    auto pads = ints_attribute(node, "pads", {0, 0, 0, 0});
    if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) {
      return nullptr;
    }
    conv.stride_h = strides[0], conv.stride_w = strides[1];
    conv.dilation_h = dilations[0], conv.dilation_w = dilations[1];
    conv.pad_h = pads[0], conv.pad_w = pads[1];
    conv.groups = int_attribute(node, "group", 1);
    if (conv.groups < 1 || conv.c % conv.groups != 0 || conv.k % conv.groups != 0) return nullptr;
    if (conv.p() != out[2] || conv.q() != out[3] || conv.k != out[1]) return nullptr;
    return std::make_shared<const KernelShape>(KernelShape::of_conv(conv));
  }
  if ((type == "Gemm" && a.size() == 2 && out.size() == 2) || (type == "MatMul" && a.size() >= 2 && out.size() >= 2)) {
    GemmShape gemm;
    gemm.m = out[out.size() - 2];
    gemm.n = out.back();
    gemm.k = type == "Gemm" && int_attribute(node, "transA", 0) ? a[0] : a.back();
    gemm.transpose_a = type == "Gemm" && int_attribute(node, "transA", 0) != 0;
    gemm.transpose_b = type == "Gemm" && int_attribute(node, "transB", 0) != 0;
    double leading = 1;
    for (size_t i = 0; i + 2 < out.size(); ++i) leading *= static_cast<double>(out[i]);
    if (b.size() <= 2) {
      gemm.m = static_cast<int64_t>(leading) * gemm.m;  // a dense layer on [..., rows, in]: the rows are one m
    } else {
      gemm.batch = static_cast<int64_t>(leading);
      gemm.samples_in_batch = true;
    }
    return std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
  }
  return nullptr;
}


// MACs of an einsum: output elements x the sizes of the summed-over labels.
double einsum_macs(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                        const std::vector<int64_t>& output, bool* ok) {
  std::string text;
  for (char c : equation) {
    if (c != ' ') text += c;
  }
  std::string left = text, right;
  bool explicit_output = false;
  if (auto arrow = text.find("->"); arrow != std::string::npos) {
    left = text.substr(0, arrow);
    right = text.substr(arrow + 2);
    explicit_output = true;
  }
  std::vector<std::string> terms;
  std::stringstream stream(left);
  for (std::string term; std::getline(stream, term, ',');) terms.push_back(term);
  *ok = terms.size() == shapes.size();
  if (!*ok) return 0;
  std::map<char, int64_t> sizes;
  std::map<char, int> uses;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string term = terms[t];
    size_t ellipsis = term.find("...");
    std::string head = ellipsis == std::string::npos ? term : term.substr(0, ellipsis);
    std::string tail = ellipsis == std::string::npos ? "" : term.substr(ellipsis + 3);
    const auto& dims = shapes[t];
    if (head.size() + tail.size() > dims.size()) {
      *ok = false;
      return 0;
    }
    for (size_t i = 0; i < head.size(); ++i) sizes[head[i]] = std::max(sizes[head[i]], dims[i]);
    for (size_t i = 0; i < tail.size(); ++i) {
      sizes[tail[i]] = std::max(sizes[tail[i]], dims[dims.size() - tail.size() + i]);
    }
    for (char c : head + tail) ++uses[c];
  }
  std::set<char> kept;
  if (explicit_output) {
    kept.insert(right.begin(), right.end());
  } else {
    for (const auto& [label, count] : uses) {
      if (count == 1) kept.insert(label);
    }
  }
  double macs = dims_product(output);
  for (const auto& [label, size] : sizes) {
    if (label != '.' && !kept.count(label)) macs *= static_cast<double>(size);
  }
  return macs;
}


// Output dims of an einsum with an explicit output ("ab,bc->ac"); ONNX 1.12 infers only its rank.
bool einsum_output_shape(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                         std::vector<int64_t>* output) {
  size_t arrow = equation.find("->");
  if (arrow == std::string::npos || equation.find("...") != std::string::npos) return false;
  std::map<char, int64_t> sizes;
  std::stringstream stream(equation.substr(0, arrow));
  size_t t = 0;
  for (std::string term; std::getline(stream, term, ','); ++t) {
    std::string letters;
    for (char c : term) {
      if (c != ' ') letters += c;
    }
    if (t >= shapes.size() || letters.size() != shapes[t].size()) return false;
    for (size_t i = 0; i < letters.size(); ++i) sizes[letters[i]] = std::max(sizes[letters[i]], shapes[t][i]);
  }
  output->clear();
  for (char c : equation.substr(arrow + 2)) {
    if (c == ' ') continue;
    if (!sizes.count(c)) return false;
    output->push_back(sizes[c]);
  }
  return true;
}

// ONNX shape inference (opset of the file, data propagation on; error_mode 1: the first error
// stops it) on `model`, in a child process: ONNX 1.12's inference functions trust the ranks of
// their inputs, and a malformed model made them read out of bounds (STFT with a rank-0 signal:
// SIGSEGV, found by the fuzzer after the window and schema checks). A crash then kills only the
// child. On success the model's value_info and outputs are the inferred ones and "" is returned;
// otherwise why inference failed.
std::string infer_in_child_process(pb::ModelProto& model, int error_mode) {
  guard_window_shape_inference();
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed before ONNX shape inference");
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed before ONNX shape inference");
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash kills the child with its signal, for the parent to report: sanitizer and fuzzer
    // handlers (which would report it as the parent's own) are taken off.
    for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal_number, SIG_DFL);
    std::string reply;
    try {
      pb::shape_inference::InferShapes(model, pb::OpSchemaRegistry::Instance(),
                                       pb::ShapeInferenceOptions(/*check_type=*/false, error_mode,
                                                                 /*enable_data_propagation=*/true));
      pb::GraphProto inferred;
      *inferred.mutable_value_info() = model.graph().value_info();
      *inferred.mutable_output() = model.graph().output();
      reply = "0" + inferred.SerializeAsString();
    } catch (const std::exception& error) {
      reply = std::string("1") + error.what();
    }
    ::_exit(write_all(fds[1], reply.data(), reply.size()) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string reply;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      reply.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return "it crashed (signal " + std::to_string(WTERMSIG(status)) +
           ") on this model, which is malformed in a way ONNX 1.12 does not check";
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    return "it stopped without a result (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
           ") on this model, which is malformed in a way ONNX 1.12 does not check";
  }
  if (reply[0] == '1') return reply.substr(1);
  pb::GraphProto inferred;
  if (!inferred.ParseFromString(reply.substr(1))) return "its result could not be read back";
  *model.mutable_graph()->mutable_value_info() = inferred.value_info();
  *model.mutable_graph()->mutable_output() = inferred.output();
  return "";
}

class Importer {
 public:
  Importer(std::filesystem::path path, const OnnxImportOptions& options)
      : path_(std::move(path)), file_(path_.string()), options_(options) {}

  /// Imports the file at the constructor's path.
  OpGraph run() { return run(read_file()); }

  /// Imports `bytes`, an ONNX file's contents (errors name the constructor's path).
  OpGraph run(const std::string& bytes) {
    parse_model(bytes);
    graph_ = &model_.graph();
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

  std::string read_file() const {
    // protobuf's own limit first, with its remedy; then the rules of every input file (a FIFO or
    // device refused before it is opened, the --max-input-bytes limit: sim/core/json_reader.h).
    std::error_code error;
    if (std::filesystem::is_regular_file(path_, error)) {
      std::uintmax_t size = std::filesystem::file_size(path_, error);
      if (!error && size > kMaxFileBytes) {
        fail("/", "the file is " + std::to_string(size) +
                      " bytes; protobuf cannot read an ONNX model of 2 GiB or more (store the weights as external data)");
      }
    }
    return read_input_file(path_);
  }

  void parse_model(const std::string& bytes) {
    const std::uintmax_t size = bytes.size();
    if (size == 0) fail("/", "the file is empty (expected an ONNX model)");
    if (!model_.ParseFromString(bytes)) {
      fail("/", "not a valid ONNX model: the protobuf data is truncated or malformed (" + std::to_string(size) +
                    " bytes)");
    }
    if (model_.ir_version() <= 0 || !model_.has_graph()) {
      fail("/", "not an ONNX model: no ir_version or no graph (is this an ONNX file?)");
    }
    for (const auto& opset : model_.opset_import()) {
      std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
      opsets_[domain] = static_cast<int>(opset.version());
    }
    if (!opsets_.count("")) fail("/opset_import", "the model imports no opset of the default ONNX domain");
    if (model_.graph().node_size() == 0) fail("/graph/node", "the graph has no nodes");
    for (const auto& property : model_.metadata_props()) metadata_[property.key()] = property.value();
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
    pb::GraphProto* graph = model_.mutable_graph();
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
    auto opset = opsets_.find(node.domain() == "ai.onnx" ? "" : node.domain());
    int version = opset == opsets_.end() ? 1 : opset->second;
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
    pb::GraphProto* graph = model_.mutable_graph();
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
    std::string error = infer_in_child_process(model_, /*error_mode=*/1);
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
    pb::ModelProto copy = model_;
    if (!infer_in_child_process(copy, /*error_mode=*/0).empty()) return;
    collect_tensors(copy.graph());
    check_window_shapes();
  }

  void record(const pb::ValueInfoProto& info, bool constant) {
    TensorInfo tensor;
    if (!info.type().has_tensor_type()) {
      tensors_[info.name()] = tensor;
      return;
    }
    const auto& type = info.type().tensor_type();
    tensor.element_type = type.elem_type();
    tensor.constant = constant;
    tensor.known = type.has_shape();
    if (type.has_shape()) {
      for (const auto& dim : type.shape().dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0) tensor.known = false;
        tensor.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      }
    }
    tensors_[info.name()] = tensor;
  }

  void collect_tensors() { collect_tensors(*graph_); }

  void collect_tensors(const pb::GraphProto& inferred) {
    tensors_.clear();
    for (const auto& info : inferred.value_info()) record(info, false);
    for (const auto& info : inferred.output()) {
      if (!tensors_.count(info.name()) || !tensors_[info.name()].known) record(info, false);
    }
    for (const auto& info : inferred.input()) record(info, false);
    for (const auto& node : inferred.node()) {
      if (node.op_type() == "Constant" && node.domain().empty()) {
        for (const auto& output : node.output()) tensors_[output].constant = true;
      }
    }
    auto add_initializer = [&](const pb::TensorProto& initializer) {
      TensorInfo tensor;
      tensor.element_type = initializer.data_type();
      tensor.dims.assign(initializer.dims().begin(), initializer.dims().end());
      tensor.known = tensor.constant = tensor.initializer = true;
      tensors_[initializer.name()] = tensor;
    };
    for (const auto& initializer : inferred.initializer()) add_initializer(initializer);
    for (const auto& sparse : inferred.sparse_initializer()) {
      pb::TensorProto values = sparse.values();
      values.clear_dims();
      for (int64_t dim : sparse.dims()) values.add_dims(dim);
      add_initializer(values);
    }
  }

  // ONNX cannot infer through operators it has no schema for; placesim assumes such a node's
  // outputs have its first input's shape and infers again downstream.
  void infer_until_stable() {
    for (int round = 0; round <= graph_->node_size(); ++round) {
      infer_shapes();
      collect_tensors();
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
          pb::ValueInfoProto* info = model_.mutable_graph()->add_value_info();
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

  double element_bytes(const TensorInfo& info) const {
    return is_float_type(info.element_type) ? options_.dtype_bytes : integer_type_bytes(info.element_type);
  }
  double bytes(const TensorInfo& info) const { return dims_product(info.dims) * element_bytes(info); }

  OpGraph build_graph();
  std::map<int, int> find_dense_bias_adds() const;
  void cost_placesim_node(int index, Op& op);
  void cost_node(int index, Op& op, const std::vector<std::string>& outputs);
  double claim_parameters(int index, const std::string& input);

  std::filesystem::path path_;
  std::string file_;
  const OnnxImportOptions& options_;
  pb::ModelProto model_;
  const pb::GraphProto* graph_ = nullptr;
  std::map<std::string, int> opsets_;
  std::map<std::string, std::string> metadata_;

  // The batch of a symbolic first dimension: the exported one when the options prefer it and the
  // file records a plausible one (a positive integer no larger than 2^32), else the caller's.
  int64_t default_batch() const {
    auto exported = metadata_.find("placesim.batch");
    if (!options_.batch_from_metadata || exported == metadata_.end()) return options_.default_batch;
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

void Importer::cost_node(int index, Op& op, const std::vector<std::string>& outputs) {
  const pb::NodeProto& node = graph_->node(index);
  const std::string& type = node.op_type();
  const OnnxOperator* known = find_onnx_operator(type);
  std::vector<std::string> inputs;
  for (const auto& input : node.input()) inputs.push_back(input);
  auto input_info = [&](size_t i) -> const TensorInfo& { return tensor(index, inputs.at(i)); };
  auto present = [&](size_t i) { return i < inputs.size() && !inputs[i].empty(); };

  double output_elements = 0, output_bytes = 0;
  bool float_output = false;
  for (const auto& output : outputs) {
    const TensorInfo& info = tensor(index, output);
    output_elements += dims_product(info.dims);
    output_bytes += bytes(info);
    float_output = float_output || is_float_type(info.element_type);
  }
  const TensorInfo& first_output = tensor(index, outputs.front());
  op.output_shape = first_output.dims;
  op.output_bytes = output_bytes;
  op.dtype_bytes = element_bytes(first_output);

  double read_bytes = 0, parameters = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!present(i)) continue;
    const TensorInfo& info = input_info(i);
    bool running_statistic = type == "BatchNormalization" && i >= 3;
    bool resize_argument = (type == "Resize" || type == "Upsample") && i >= 1;
    if (running_statistic || resize_argument) continue;
    read_bytes += bytes(info);
    parameters += claim_parameters(index, inputs[i]);
  }
  op.parameter_count = parameters;
  op.forward_bytes = read_bytes + output_bytes;
  op.kind = known ? known->kind : OpKind::kOther;
  op.type = type;

  if (!known) {
    ++unknown_operators_[type];
    if (options_.strict) {
      fail_node(index, "unsupported operator \"" + type + "\" (strict mode refuses operators placesim cannot cost; "
                       "see docs/onnx.md)");
    }
  } else if (known->cost == OnnxCost::kGemm) {
    double macs = 0;
    const TensorInfo& a = input_info(0);
    if (type == "Conv" || type == "ConvInteger" || type == "QLinearConv") {
      // Every output element is a dot product over W's [Cin / groups, kh, kw, ...].
      size_t weight = type == "QLinearConv" ? 3 : 1;
      macs = dims_product(first_output.dims) * dims_product(input_info(weight).dims, 1);
    } else if (type == "ConvTranspose") {
      // Every input element is scattered through W's [Cout / groups, kh, kw, ...].
      macs = dims_product(a.dims) * dims_product(input_info(1).dims, 1);
    } else if (type == "Gemm") {
      if (a.dims.size() != 2) fail_node(index, "Gemm expects a rank-2 A, got " + shape_text(a.dims));
      int64_t inner = int_attribute(node, "transA", 0) ? a.dims[0] : a.dims[1];
      macs = dims_product(first_output.dims) * static_cast<double>(inner);
    } else if (type == "Einsum") {
      std::vector<std::vector<int64_t>> shapes;
      for (size_t i = 0; i < inputs.size(); ++i) shapes.push_back(input_info(i).dims);
      bool ok = false;
      macs = einsum_macs(string_attribute(node, "equation", ""), shapes, first_output.dims, &ok);
      if (!ok) fail_node(index, "cannot read the einsum equation \"" + string_attribute(node, "equation", "") + "\"");
    } else {  // MatMul, MatMulInteger, QLinearMatMul: [..., M, K] x [..., K, N]
      int64_t inner = a.dims.empty() ? 1 : a.dims.back();
      macs = dims_product(first_output.dims) * static_cast<double>(inner);
    }
    op.forward_flops = 2 * macs;
    if (present(1)) op.kernel = onnx_kernel_shape(node, type, a.dims, input_info(1).dims, first_output.dims);
  } else if (known->cost == OnnxCost::kPerOutputElement) {
    op.forward_flops = output_elements;
  } else if (known->cost == OnnxCost::kPerInputElement) {
    op.forward_flops = present(0) ? dims_product(input_info(0).dims) : 0;
  } else if (known->cost == OnnxCost::kNormalization) {
    op.forward_flops = kNormalizationFlopsPerElement * dims_product(input_info(0).dims);
  } else if (known->cost == OnnxCost::kSoftmax) {
    op.forward_flops = kSoftmaxFlopsPerElement * output_elements;
  } else if (known->cost == OnnxCost::kCrossEntropy) {
    op.forward_flops = kCrossEntropyFlopsPerLogit * dims_product(input_info(0).dims);
  } else if (known->cost == OnnxCost::kWindow) {
    const pb::AttributeProto* kernel = find_attribute(node, "kernel_shape");
    if (!kernel || kernel->ints_size() == 0) fail_node(index, "pooling needs a kernel_shape attribute");
    double window = 1;
    for (int64_t k : kernel->ints()) window *= static_cast<double>(k);
    op.forward_flops = dims_product(first_output.dims) * window;
  } else if (known->cost == OnnxCost::kMetadata) {
    op.forward_bytes = 0;
  }

  if (type == "ReduceMean" && present(0) && input_info(0).dims.size() == 4 && first_output.dims.size() == 2) {
    op.kind = OpKind::kPooling;  // mean over H and W: a global average pool, as the zoo's "Mean"
  }
  if (type == "Gather" && find_tensor(inputs.at(0)) && find_tensor(inputs[0])->initializer &&
      is_float_type(find_tensor(inputs[0])->element_type)) {
    // An embedding lookup reads the ids and the selected rows and writes the rows (the zoo's GatherV2).
    op.kind = OpKind::kEmbedding;
    op.forward_bytes = (present(1) ? bytes(input_info(1)) : 0) + 2 * output_bytes;
    op.forward_flops = 0;
    op.backward_flops = output_elements;  // scatter-add into the table's gradient
    op.backward_bytes = 2 * op.forward_bytes;
    return;
  }
  if (!float_output) return;  // shape and index computations have no gradient
  const bool gemm = is_gemm_kind(op.kind);
  op.backward_flops = gemm ? 2 * op.forward_flops : op.forward_flops;
  op.backward_bytes = 2 * op.forward_bytes;
}


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

void Importer::cost_placesim_node(int index, Op& op) {
  const pb::NodeProto& node = graph_->node(index);
  auto number = [&](const std::string& name) {
    std::string text = string_attribute(node, name, "0");
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0 || value > kMaxPlausibleBytes * 1e5) {
      fail_node(index, "attribute " + name + " is not a plausible non-negative number: \"" + text + "\"");
    }
    return value;
  };
  double batch_scale = 1, bytes_scale = 1;
  auto exported_batch = metadata_.find("placesim.batch");
  auto bound_batch = bindings_.find("N");
  if (int_attribute(node, "batch_scaled", 0) && exported_batch != metadata_.end() && bound_batch != bindings_.end()) {
    batch_scale = static_cast<double>(bound_batch->second) / std::max(1.0, std::strtod(exported_batch->second.c_str(), nullptr));
  }
  auto exported_dtype = metadata_.find("placesim.dtype_bytes");
  if (exported_dtype != metadata_.end()) {
    double exported = std::strtod(exported_dtype->second.c_str(), nullptr);
    if (exported > 0) bytes_scale = options_.dtype_bytes / exported;
  }
  op.type = node.op_type();
  std::string kind = string_attribute(node, "kind", "other");
  auto parsed = parse_op_kind(kind);
  if (!parsed) fail_node(index, "unknown op kind \"" + kind + "\"");
  op.kind = *parsed;
  op.forward_flops = number("forward_flops") * batch_scale;
  op.backward_flops = number("backward_flops") * batch_scale;
  op.forward_bytes = number("forward_bytes") * batch_scale * bytes_scale;
  op.backward_bytes = number("backward_bytes") * batch_scale * bytes_scale;
  op.parameter_count = number("parameters");
  op.output_bytes = number("output_bytes") * batch_scale * bytes_scale;
  op.dtype_bytes = number("dtype_bytes") * bytes_scale;
  if (!(op.dtype_bytes > 0)) op.dtype_bytes = options_.dtype_bytes;
  op.cpu_only = int_attribute(node, "cpu_only", 0) != 0;
  op.requested_device = string_attribute(node, "device", "");
  op.colocate_with = string_attribute(node, "colocate_with", "");
  op.layer = string_attribute(node, "layer", "");
  if (node.output_size() > 0) {
    const TensorInfo* output = find_tensor(node.output(0));
    if (output && output->known) op.output_shape = output->dims;
  }
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
    if (placesim_node) {
      cost_placesim_node(i, op);
    } else {
      cost_node(i, op, outputs);
    }
    if (fused != dense_bias.end()) {
      const std::string& bias = last.input(0) == node.output(0) ? last.input(1) : last.input(0);
      op.parameter_count += claim_parameters(i, bias);
      op.forward_bytes += bytes(tensor(i, bias));
      op.backward_bytes = 2 * op.forward_bytes;
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
