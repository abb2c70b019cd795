// OpGraph -> weight-free ONNX model. An op becomes the standard ONNX node whose cost, as the
// importer computes it, is the op's own (Conv, Gemm, MatMul + bias Add, BatchNormalization, ...);
// the attributes that the graph does not store (kernel sizes, strides, pads) are recovered from
// the op's FLOPs, parameters and shapes. Ops with no such node (fused-QKV attention, TensorFlow
// variables, losses over sequences) become ai.placesim nodes that carry their costs.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <set>
#include <sstream>

#include "sim/core/input_error.h"
#include "sim/graph/kernel_shape_json.h"
#include "sim/graph/onnx/onnx_dims.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/graph/onnx/onnx_operators.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

constexpr int64_t kIrVersion = 8;       // ONNX 1.12
constexpr int64_t kDefaultOpset = 17;   // the newest opset ONNX 1.12 knows (LayerNormalization is 17)
constexpr const char* kBatchParameter = "N";
constexpr const char* kAbsentWeights = "placesim-weights-not-exported.bin";

std::string number_text(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// Stride and symmetric padding with which a window of `kernel` maps `input` to `output` positions.
bool fit_window(int64_t input, int64_t output, int64_t kernel, int64_t* stride, int64_t* pad) {
  for (int64_t s = 1; s <= std::max<int64_t>(1, input); ++s) {
    for (int64_t p = 0; p < std::max<int64_t>(1, kernel); ++p) {
      int64_t span = input + 2 * p - kernel;
      if (span >= 0 && span / s + 1 == output) {
        *stride = s;
        *pad = p;
        return true;
      }
    }
  }
  return false;
}

void set_int(pb::NodeProto* node, const std::string& name, int64_t value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(pb::AttributeProto::INT);
  attribute->set_i(value);
}
void set_ints(pb::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(pb::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
}
void set_string(pb::NodeProto* node, const std::string& name, const std::string& value) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(pb::AttributeProto::STRING);
  attribute->set_s(value);
}
void set_strings(pb::NodeProto* node, const std::string& name, const std::vector<std::string>& values) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(pb::AttributeProto::STRINGS);
  for (const auto& value : values) attribute->add_strings(value);
}

class Exporter {
 public:
  explicit Exporter(const OpGraph& graph) : graph_(graph), onnx_(model_.mutable_graph()) {}

  std::string run() {
    std::vector<OpId> order;
    std::vector<std::string> cycle;
    if (!graph_.topological_order(&order, &cycle)) throw InputError("", "", "cannot export a graph with a cycle");
    detect_batch();
    model_.set_ir_version(kIrVersion);
    model_.set_producer_name("placesim");
    model_.set_producer_version("0.1.0");
    model_.set_doc_string("Exported by placesim without weights: initializers declare their shapes and point at "
                          "external data that was not written. Costs: docs/onnx.md.");
    for (const auto& [domain, version] : std::vector<std::pair<std::string, int64_t>>{
             {"", kDefaultOpset}, {"com.microsoft", 1}, {kPlacesimOnnxDomain, 1}}) {
      auto* opset = model_.add_opset_import();
      opset->set_domain(domain);
      opset->set_version(version);
    }
    onnx_->set_name(graph_.name());
    for (OpId id : order) export_op(id);
    for (OpId id : order) {
      const Op& op = graph_.op(id);
      bool consumed = false;
      for (const auto& output : graph_.outputs(id)) consumed = consumed || !output.edge.control;
      if (!consumed && op.type != "Placeholder") describe(onnx_->add_output(), op.name, op);
    }
    add_metadata("placesim.dtype_bytes", number_text(model_dtype_bytes()));
    if (batch_ > 0) add_metadata("placesim.batch", std::to_string(batch_));
    std::string bytes;
    if (!model_.SerializeToString(&bytes)) throw std::runtime_error("cannot serialize the ONNX model");
    return bytes;
  }

 private:
  // The zoo's graphs start every tensor with the batch; such a graph is written with a symbolic
  // batch "N" so it can be imported at any batch size.
  void detect_batch() {
    int64_t batch = 0;
    bool placeholders = false;
    for (OpId id = 0; id < graph_.size(); ++id) {
      const Op& op = graph_.op(id);
      if (op.type == "Placeholder") placeholders = true;
      if (op.output_shape.empty()) continue;
      if (batch == 0) batch = op.output_shape.front();
      if (op.output_shape.front() != batch) return;
    }
    if (placeholders && batch > 0) batch_ = batch;
  }

  double model_dtype_bytes() const {
    for (OpId id = 0; id < graph_.size(); ++id) {
      if (graph_.op(id).type != "Placeholder") return graph_.op(id).dtype_bytes;
    }
    return graph_.size() ? graph_.op(0).dtype_bytes : 4;
  }

  void add_metadata(const std::string& key, const std::string& value) {
    auto* property = model_.add_metadata_props();
    property->set_key(key);
    property->set_value(value);
  }

  static int32_t float_type(double dtype_bytes) {
    if (dtype_bytes == 2) return pb::TensorProto::FLOAT16;
    if (dtype_bytes == 8) return pb::TensorProto::DOUBLE;
    return pb::TensorProto::FLOAT;
  }

  void describe(pb::ValueInfoProto* info, const std::string& name, const Op& op, int32_t element_type = 0) const {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(element_type ? element_type : float_type(op.dtype_bytes));
    if (op.output_shape.empty()) return;
    auto* shape = type->mutable_shape();
    for (size_t d = 0; d < op.output_shape.size(); ++d) {
      if (d == 0 && batch_ > 0) shape->add_dim()->set_dim_param(kBatchParameter);
      else shape->add_dim()->set_dim_value(op.output_shape[d]);
    }
  }

  // A weight whose values are not exported: its shape, and a pointer to absent external data.
  std::string weight(const std::string& name, const std::vector<int64_t>& dims, double dtype_bytes) {
    pb::TensorProto* tensor = onnx_->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(float_type(dtype_bytes));
    for (int64_t dim : dims) tensor->add_dims(dim);
    tensor->set_data_location(pb::TensorProto::EXTERNAL);
    auto* location = tensor->add_external_data();
    location->set_key("location");
    location->set_value(kAbsentWeights);
    auto* length = tensor->add_external_data();
    length->set_key("length");
    length->set_value(number_text(dims_product(dims) * dtype_bytes));
    return name;
  }

  std::string int64_constant(const std::string& name, const std::vector<int64_t>& values) {
    pb::TensorProto* tensor = onnx_->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(pb::TensorProto::INT64);
    tensor->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t value : values) tensor->add_int64_data(value);
    return name;
  }

  pb::NodeProto* node(const std::string& type, const std::string& name, const std::vector<std::string>& inputs,
                      const std::string& output, const std::string& domain = "") {
    pb::NodeProto* node = onnx_->add_node();
    node->set_op_type(type);
    node->set_name(name);
    if (!domain.empty()) node->set_domain(domain);
    for (const auto& input : inputs) node->add_input(input);
    node->add_output(output);
    return node;
  }

  void export_op(OpId id) {
    const Op& op = graph_.op(id);
    std::vector<OpId> inputs;
    bool control = false;
    for (const auto& input : graph_.inputs(id)) {
      if (input.edge.control) control = true;
      else inputs.push_back(input.op);
    }
    if (op.type == "Placeholder" && inputs.empty() && !control) {
      describe(onnx_->add_input(), op.name, op, integer_input(id) ? pb::TensorProto::INT32 : 0);
      return;
    }
    if (control || !export_standard(id, inputs)) export_placesim(id, inputs);
    if (!op.output_shape.empty() || op.type != "Placeholder") describe(onnx_->add_value_info(), op.name, op);
  }

  // Token ids and class labels are int32 (the zoo's inputs read only by embeddings and losses).
  bool integer_input(OpId id) const {
    auto consumers = graph_.outputs(id);
    if (consumers.empty()) return false;
    for (const auto& consumer : consumers) {
      const Op& user = graph_.op(consumer.op);
      auto user_inputs = graph_.inputs(consumer.op);
      bool labels = user.type == "SparseSoftmaxCrossEntropyWithLogits" && user_inputs.size() == 2 &&
                    user_inputs[1].op == id;
      if (user.type != "GatherV2" && !labels) return false;
    }
    return true;
  }

  bool export_standard(OpId id, const std::vector<OpId>& inputs) {
    const Op& op = graph_.op(id);
    const std::string& type = op.type;
    if (inputs.empty() || op.output_shape.empty()) return false;
    const std::vector<int64_t>& x = graph_.op(inputs[0]).output_shape;
    const std::vector<int64_t>& y = op.output_shape;
    const std::string input = graph_.op(inputs[0]).name;
    if (x.empty()) return false;
    const bool unary = inputs.size() == 1;
    if (unary && (type == "Relu" || type == "Sigmoid" || type == "Tanh" || type == "Dropout") && x == y) {
      node(type, op.name, {input}, op.name);
      return true;
    }
    if (unary && type == "Gelu" && x == y) {
      node("Gelu", op.name, {input}, op.name, "com.microsoft");
      return true;
    }
    if (unary && type == "Softmax" && x == y) {
      set_int(node("Softmax", op.name, {input}, op.name), "axis", -1);
      return true;
    }
    if (unary && type == "FusedBatchNorm" && x.size() >= 2 && same(op.parameter_count, 2.0 * static_cast<double>(x[1]))) {
      std::vector<std::string> names;
      for (const char* part : {"gamma", "beta", "moving_mean", "moving_variance"}) {
        names.push_back(weight(op.name + "/" + part, {x[1]}, op.dtype_bytes));
      }
      node("BatchNormalization", op.name, {input, names[0], names[1], names[2], names[3]}, op.name);
      return true;
    }
    if (unary && type == "LayerNorm" && same(op.parameter_count, 2.0 * static_cast<double>(x.back()))) {
      auto* n = node("LayerNormalization", op.name,
                     {input, weight(op.name + "/gamma", {x.back()}, op.dtype_bytes),
                      weight(op.name + "/beta", {x.back()}, op.dtype_bytes)},
                     op.name);
      set_int(n, "axis", -1);
      return true;
    }
    if (unary && type == "Conv2D") return export_conv(op, input, x);
    if (unary && (type == "MaxPool" || type == "AvgPool")) return export_pool(op, input, x);
    if (unary && type == "Mean" && x.size() == 4 && y == std::vector<int64_t>{x[0], x[1]}) {
      auto* n = node("ReduceMean", op.name, {input}, op.name);
      set_ints(n, "axes", {2, 3});
      set_int(n, "keepdims", 0);
      return true;
    }
    if (unary && type == "MatMul") return export_dense(op, input, x);
    if (type == "AddV2" && inputs.size() <= 2 && x == y) {
      std::string other = inputs.size() == 2 ? graph_.op(inputs[1]).name : input;
      node("Add", op.name, {input, other}, op.name);
      return true;
    }
    if (type == "ConcatV2") return export_concat(op, inputs);
    if (unary && type == "Reshape" && same(dims_product(x), dims_product(y))) {
      if (y.size() == 2 && x.size() >= 2 && y[0] == x[0] && y[1] == static_cast<int64_t>(dims_product(x, 1))) {
        set_int(node("Flatten", op.name, {input}, op.name), "axis", 1);
      } else {
        std::vector<int64_t> shape = y;
        if (batch_ > 0 && !x.empty() && x[0] == y[0]) shape[0] = 0;  // 0 = keep the input's (batch) dimension
        node("Reshape", op.name, {input, int64_constant(op.name + "/shape", shape)}, op.name);
      }
      return true;
    }
    if (unary && type == "GatherV2" && y.size() == x.size() + 1) {
      const double width = static_cast<double>(y.back());
      const double rows = op.parameter_count / width;
      if (rows < 1 || rows != std::floor(rows)) return false;
      std::string table = weight(op.name + "/embeddings", {static_cast<int64_t>(rows), y.back()}, op.dtype_bytes);
      embedding_tables_.push_back({table, static_cast<int64_t>(rows), y.back()});
      set_int(node("Gather", op.name, {table, input}, op.name), "axis", 0);
      return true;
    }
    if (type == "SparseSoftmaxCrossEntropyWithLogits" && inputs.size() == 2 && x.size() == 2 &&
        graph_.op(inputs[1]).output_shape == std::vector<int64_t>{x[0]}) {
      set_string(node("SoftmaxCrossEntropyLoss", op.name, {input, graph_.op(inputs[1]).name}, op.name), "reduction",
                 "none");
      return true;
    }
    return false;
  }

  bool export_conv(const Op& op, const std::string& input, const std::vector<int64_t>& x) {
    const std::vector<int64_t>& y = op.output_shape;
    if (x.size() != 4 || y.size() != 4 || x[0] != y[0]) return false;
    const double macs = op.forward_flops / 2;
    const double area = macs / dims_product(y) / static_cast<double>(x[1]);  // kh x kw, groups = 1
    if (area < 1 || area != std::floor(area)) return false;
    const double weights = static_cast<double>(y[1]) * static_cast<double>(x[1]) * area;
    const double biases = op.parameter_count - weights;
    if (!same(biases, 0) && !same(biases, static_cast<double>(y[1]))) return false;
    const auto kernel_area = static_cast<int64_t>(area);
    std::vector<std::pair<int64_t, int64_t>> kernels;
    // The op's own kernel shape first: a 7 x 1 and a 1 x 7 window fit the same sizes.
    if (op.kernel && op.kernel->kind == KernelKind::kConv2d && op.kernel->conv.r * op.kernel->conv.s == kernel_area) {
      kernels.emplace_back(op.kernel->conv.r, op.kernel->conv.s);
    }
    const auto root = static_cast<int64_t>(std::llround(std::sqrt(area)));
    if (root * root == kernel_area) kernels.emplace_back(root, root);
    for (int64_t kh = 1; kh <= kernel_area; ++kh) {
      if (kernel_area % kh == 0 && kh != root) kernels.emplace_back(kh, kernel_area / kh);
    }
    for (const auto& [kh, kw] : kernels) {
      int64_t sh = 0, sw = 0, ph = 0, pw = 0;
      if (!fit_window(x[2], y[2], kh, &sh, &ph) || !fit_window(x[3], y[3], kw, &sw, &pw)) continue;
      std::vector<std::string> inputs{input, weight(op.name + "/kernel", {y[1], x[1], kh, kw}, op.dtype_bytes)};
      if (!same(biases, 0)) inputs.push_back(weight(op.name + "/bias", {y[1]}, op.dtype_bytes));
      auto* n = node("Conv", op.name, inputs, op.name);
      set_ints(n, "kernel_shape", {kh, kw});
      set_ints(n, "strides", {sh, sw});
      set_ints(n, "pads", {ph, pw, ph, pw});
      return true;
    }
    return false;
  }

  bool export_pool(const Op& op, const std::string& input, const std::vector<int64_t>& x) {
    const std::vector<int64_t>& y = op.output_shape;
    if (x.size() != 4 || y.size() != 4) return false;
    const double window = op.forward_flops / dims_product(y);
    const auto k = static_cast<int64_t>(std::llround(std::sqrt(window)));
    if (k < 1 || !same(static_cast<double>(k * k), window)) return false;
    int64_t sh = 0, sw = 0, ph = 0, pw = 0;
    if (!fit_window(x[2], y[2], k, &sh, &ph) || !fit_window(x[3], y[3], k, &sw, &pw)) return false;
    auto* n = node(op.type == "MaxPool" ? "MaxPool" : "AveragePool", op.name, {input}, op.name);
    set_ints(n, "kernel_shape", {k, k});
    set_ints(n, "strides", {sh, sw});
    set_ints(n, "pads", {ph, pw, ph, pw});
    return true;
  }

  // A dense layer: Gemm on matrices, MatMul (+ Add of the bias) on higher ranks; tied weights
  // (no parameters of its own) read an embedding table through an Einsum.
  bool export_dense(const Op& op, const std::string& input, const std::vector<int64_t>& x) {
    const std::vector<int64_t>& y = op.output_shape;
    if (x.size() < 2 || y.size() != x.size()) return false;
    const int64_t in = x.back(), out = y.back();
    const double weights = static_cast<double>(in) * static_cast<double>(out);
    if (!same(op.forward_flops, 2 * dims_product(y) / static_cast<double>(out) * weights)) return false;
    if (same(op.parameter_count, 0)) {
      for (const auto& table : embedding_tables_) {
        if (table.rows != out || table.width != in) continue;
        static const std::string kLetters = "abcdefghijklmnopqrstuvwx";
        if (x.size() > kLetters.size()) return false;
        std::string batch = kLetters.substr(0, x.size() - 1);
        auto* n = node("Einsum", op.name, {input, table.name}, op.name);
        set_string(n, "equation", batch + "y," + "zy->" + batch + "z");
        return true;
      }
      return false;
    }
    const bool bias = same(op.parameter_count, weights + static_cast<double>(out));
    if (!bias && !same(op.parameter_count, weights)) return false;
    std::string kernel = weight(op.name + "/kernel", {in, out}, op.dtype_bytes);
    if (x.size() == 2) {
      std::vector<std::string> inputs{input, kernel};
      if (bias) inputs.push_back(weight(op.name + "/bias", {out}, op.dtype_bytes));
      node("Gemm", op.name, inputs, op.name);
      return true;
    }
    if (!bias) {
      node("MatMul", op.name, {input, kernel}, op.name);
      return true;
    }
    std::string product_name = op.name + "/MatMul";
    node("MatMul", op.name, {input, kernel}, product_name);
    describe(onnx_->add_value_info(), product_name, op);
    node("Add", op.name + "/BiasAdd", {product_name, weight(op.name + "/bias", {out}, op.dtype_bytes)}, op.name);
    return true;
  }

  bool export_concat(const Op& op, const std::vector<OpId>& inputs) {
    const std::vector<int64_t>& y = op.output_shape;
    for (size_t axis = 0; axis < y.size(); ++axis) {
      int64_t total = 0;
      bool fits = true;
      for (OpId input : inputs) {
        const auto& shape = graph_.op(input).output_shape;
        if (shape.size() != y.size()) return false;
        for (size_t d = 0; d < y.size(); ++d) fits = fits && (d == axis || shape[d] == y[d]);
        total += shape[axis];
      }
      if (!fits || total != y[axis]) continue;
      std::vector<std::string> names;
      for (OpId input : inputs) names.push_back(graph_.op(input).name);
      set_int(node("Concat", op.name, names, op.name), "axis", static_cast<int64_t>(axis));
      return true;
    }
    return false;
  }

  void export_placesim(OpId id, const std::vector<OpId>& inputs) {
    const Op& op = graph_.op(id);
    std::vector<std::string> names, input_bytes, control;
    for (const auto& input : graph_.inputs(id)) {
      if (input.edge.control) {
        control.push_back(graph_.op(input.op).name);
      } else {
        names.push_back(graph_.op(input.op).name);
        input_bytes.push_back(number_text(input.edge.bytes));
      }
    }
    (void)inputs;
    auto* n = node(op.type.empty() ? "Op" : op.type, op.name, names, op.name, kPlacesimOnnxDomain);
    set_string(n, "kind", to_string(op.kind));
    set_string(n, "forward_flops", number_text(op.forward_flops));
    set_string(n, "backward_flops", number_text(op.backward_flops));
    set_string(n, "forward_bytes", number_text(op.forward_bytes));
    set_string(n, "backward_bytes", number_text(op.backward_bytes));
    if (op.batch_statistics_bytes > 0) set_string(n, "batch_statistics_bytes", number_text(op.batch_statistics_bytes));
    if (op.gradient_sum_bytes > 0) set_string(n, "gradient_sum_bytes", number_text(op.gradient_sum_bytes));
    set_string(n, "parameters", number_text(op.parameter_count));
    set_string(n, "output_bytes", number_text(op.output_bytes));
    set_string(n, "dtype_bytes", number_text(op.dtype_bytes));
    if (!input_bytes.empty()) set_strings(n, "input_bytes", input_bytes);
    if (!control.empty()) set_strings(n, "control_inputs", control);
    if (batch_ > 0) set_int(n, "batch_scaled", 1);
    if (op.cpu_only) set_int(n, "cpu_only", 1);
    if (!op.requested_device.empty()) set_string(n, "device", op.requested_device);
    if (!op.colocate_with.empty()) set_string(n, "colocate_with", op.colocate_with);
    if (!op.layer.empty()) set_string(n, "layer", op.layer);
    if (op.kernel) set_string(n, "kernel", write_kernel_shape(*op.kernel).dump());  // scaled with the batch on import
  }

  struct Table {
    std::string name;
    int64_t rows = 0;
    int64_t width = 0;
  };

  const OpGraph& graph_;
  pb::ModelProto model_;
  pb::GraphProto* onnx_;
  int64_t batch_ = 0;
  std::vector<Table> embedding_tables_;
};

}  // namespace

std::string export_onnx_model(const OpGraph& graph) { return Exporter(graph).run(); }

}  // namespace placesim
