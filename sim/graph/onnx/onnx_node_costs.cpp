#include "sim/graph/onnx/onnx_node_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "sim/core/json_reader.h"
#include "sim/graph/kernel_shape.h"
#include "sim/graph/kernel_shape_json.h"
#include "sim/graph/layer_costs.h"
#include "sim/graph/onnx/onnx_attributes.h"
#include "sim/graph/onnx/onnx_dims.h"
#include "sim/graph/onnx/onnx_operators.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

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

/// An Einsum that is a dense layer reading a [z, y] table, as placesim exports tied logits:
/// "<rows>y,zy-><rows>z" (x W^T), a GEMM of m = the rows' product, n = z, k = y; null otherwise.
std::shared_ptr<const KernelShape> einsum_dense_kernel(const std::string& equation, const std::vector<int64_t>& a,
                                                       const std::vector<int64_t>& out) {
  const size_t comma = equation.find(','), arrow = equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma) return nullptr;
  const std::string lhs = equation.substr(0, comma), rhs = equation.substr(comma + 1, arrow - comma - 1);
  const std::string result = equation.substr(arrow + 2);
  if (lhs.size() < 2 || rhs.size() != 2 || rhs[1] != lhs.back() || result != lhs.substr(0, lhs.size() - 1) + rhs[0]) {
    return nullptr;
  }
  if (a.size() != lhs.size() || out.size() != result.size()) return nullptr;
  GemmShape gemm;
  gemm.m = 1;
  for (size_t i = 0; i + 1 < out.size(); ++i) gemm.m *= out[i];
  gemm.n = out.back();
  gemm.k = a.back();
  if (gemm.m < 1 || gemm.n < 1 || gemm.k < 1 || gemm.m > (1ll << 31)) return nullptr;
  return std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
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

}  // namespace

void cost_onnx_node(const pb::NodeProto& node, const std::vector<std::string>& outputs, NodeCostContext& context,
                    Op& op) {
  const std::string& type = node.op_type();
  const OnnxOperator* known = find_onnx_operator(type);
  std::vector<std::string> inputs;
  for (const auto& input : node.input()) inputs.push_back(input);
  auto input_info = [&](size_t i) -> const TensorInfo& { return context.tensor(inputs.at(i)); };
  auto present = [&](size_t i) { return i < inputs.size() && !inputs[i].empty(); };

  double output_elements = 0, output_bytes = 0;
  bool float_output = false;
  for (const auto& output : outputs) {
    const TensorInfo& info = context.tensor(output);
    output_elements += dims_product(info.dims);
    output_bytes += tensor_bytes(info, context.float_bytes());
    float_output = float_output || is_float_type(info.element_type);
  }
  const TensorInfo& first_output = context.tensor(outputs.front());
  op.output_shape = first_output.dims;
  op.output_bytes = output_bytes;
  op.dtype_bytes = element_bytes(first_output, context.float_bytes());

  double read_bytes = 0, parameters = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!present(i)) continue;
    const TensorInfo& info = input_info(i);
    bool running_statistic = type == "BatchNormalization" && i >= 3;
    bool resize_argument = (type == "Resize" || type == "Upsample") && i >= 1;
    if (running_statistic || resize_argument) continue;
    read_bytes += tensor_bytes(info, context.float_bytes());
    parameters += context.claim_parameters(inputs[i]);
  }
  op.parameter_count = parameters;
  op.forward_bytes = read_bytes + output_bytes;
  op.kind = known ? known->kind : OpKind::kOther;
  op.type = type;

  if (!known) {
    context.unknown_operator(type);
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
      if (a.dims.size() != 2) context.fail("Gemm expects a rank-2 A, got " + shape_text(a.dims));
      int64_t inner = int_attribute(node, "transA", 0) ? a.dims[0] : a.dims[1];
      macs = dims_product(first_output.dims) * static_cast<double>(inner);
    } else if (type == "Einsum") {
      std::vector<std::vector<int64_t>> shapes;
      for (size_t i = 0; i < inputs.size(); ++i) shapes.push_back(input_info(i).dims);
      bool ok = false;
      macs = einsum_macs(string_attribute(node, "equation", ""), shapes, first_output.dims, &ok);
      if (!ok) context.fail("cannot read the einsum equation \"" + string_attribute(node, "equation", "") + "\"");
      if (shapes.size() == 2) op.kernel = einsum_dense_kernel(string_attribute(node, "equation", ""), shapes[0], first_output.dims);
    } else {  // MatMul, MatMulInteger, QLinearMatMul: [..., M, K] x [..., K, N]
      int64_t inner = a.dims.empty() ? 1 : a.dims.back();
      macs = dims_product(first_output.dims) * static_cast<double>(inner);
    }
    op.forward_flops = gemm_forward_flops(macs);
    if (present(1) && !op.kernel) op.kernel = onnx_kernel_shape(node, type, a.dims, input_info(1).dims, first_output.dims);
  } else if (known->cost == OnnxCost::kPerOutputElement) {
    op.forward_flops = kElementwiseFlopsPerElement * output_elements;
  } else if (known->cost == OnnxCost::kPerInputElement) {
    op.forward_flops = present(0) ? kReductionFlopsPerInputElement * dims_product(input_info(0).dims) : 0;
  } else if (known->cost == OnnxCost::kNormalization) {
    op.forward_flops = kNormalizationFlopsPerElement * dims_product(input_info(0).dims);
  } else if (known->cost == OnnxCost::kSoftmax) {
    op.forward_flops = kSoftmaxFlopsPerElement * output_elements;
  } else if (known->cost == OnnxCost::kCrossEntropy) {
    op.forward_flops = kCrossEntropyFlopsPerLogit * dims_product(input_info(0).dims);
  } else if (known->cost == OnnxCost::kWindow) {
    const pb::AttributeProto* kernel = find_attribute(node, "kernel_shape");
    if (!kernel || kernel->ints_size() == 0) context.fail("pooling needs a kernel_shape attribute");
    double window = 1;
    for (int64_t k : kernel->ints()) window *= static_cast<double>(k);
    op.forward_flops = pooling_flops(dims_product(first_output.dims), window);
  } else if (known->cost == OnnxCost::kMetadata) {
    op.forward_bytes = 0;
  }

  if (type == "ReduceMean" && present(0) && input_info(0).dims.size() == 4 && first_output.dims.size() == 2) {
    op.kind = OpKind::kPooling;  // mean over H and W: a global average pool, as the zoo's "Mean"
  }
  if (type == "Gather" && context.find_tensor(inputs.at(0)) && context.find_tensor(inputs[0])->initializer &&
      is_float_type(context.find_tensor(inputs[0])->element_type)) {
    // An embedding lookup reads the ids and the selected rows and writes the rows (the zoo's GatherV2).
    op.kind = OpKind::kEmbedding;
    set_embedding_costs(op, present(1) ? tensor_bytes(input_info(1), context.float_bytes()) : 0, output_elements);
    return;
  }
  if (!float_output) return;  // shape and index computations have no gradient
  GradientKernel gradient = type == "Concat" ? GradientKernel::kSlices : GradientKernel::kGeneric;
  if (known && known->cost == OnnxCost::kPerOutputElement && outputs.size() == 1) {
    // Inputs of the output's size; the others are scalars (Clip's bounds, Dropout's ratio).
    int full_inputs = 0;
    for (size_t i = 0; i < inputs.size(); ++i) full_inputs += present(i) && dims_product(input_info(i).dims) == output_elements;
    if (full_inputs == 1) gradient = GradientKernel::kUnaryElementwise;
    if (full_inputs == 2 && inputs.size() == 2 && type == "Add") gradient = GradientKernel::kIdentity;
  }
  set_backward_costs(op, gradient);
  if (type == "BatchNormalization" && present(0)) {
    add_batch_statistics_passes(op, tensor_bytes(input_info(0), context.float_bytes()));
  }
}

void cost_placesim_node(const pb::NodeProto& node, const PlacesimNodeScale& scale, NodeCostContext& context, Op& op) {
  auto number = [&](const std::string& name) {
    std::string text = string_attribute(node, name, "0");
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0 || value > kMaxPlausibleBytes * 1e5) {
      context.fail("attribute " + name + " is not a plausible non-negative number: \"" + text + "\"");
    }
    return value;
  };
  const double batch_scale = int_attribute(node, "batch_scaled", 0) ? scale.batch : 1, bytes_scale = scale.bytes;
  op.type = node.op_type();
  std::string kind = string_attribute(node, "kind", "other");
  auto parsed = parse_op_kind(kind);
  if (!parsed) context.fail("unknown op kind \"" + kind + "\"");
  op.kind = *parsed;
  op.forward_flops = number("forward_flops") * batch_scale;
  op.backward_flops = number("backward_flops") * batch_scale;
  op.forward_bytes = number("forward_bytes") * batch_scale * bytes_scale;
  op.backward_bytes = number("backward_bytes") * batch_scale * bytes_scale;
  op.batch_statistics_bytes = number("batch_statistics_bytes") * batch_scale * bytes_scale;
  if (op.batch_statistics_bytes > std::min(op.forward_bytes, op.backward_bytes)) {
    context.fail("attribute batch_statistics_bytes exceeds forward_bytes or backward_bytes, which include it");
  }
  op.gradient_sum_bytes = number("gradient_sum_bytes") * batch_scale * bytes_scale;
  if (op.gradient_sum_bytes > op.backward_bytes) {
    context.fail("attribute gradient_sum_bytes exceeds backward_bytes, which includes it");
  }
  op.parameter_count = number("parameters");
  op.output_bytes = number("output_bytes") * batch_scale * bytes_scale;
  op.dtype_bytes = number("dtype_bytes") * bytes_scale;
  if (!(op.dtype_bytes > 0)) op.dtype_bytes = scale.dtype_bytes;
  op.cpu_only = int_attribute(node, "cpu_only", 0) != 0;
  op.requested_device = string_attribute(node, "device", "");
  op.colocate_with = string_attribute(node, "colocate_with", "");
  op.layer = string_attribute(node, "layer", "");
  if (node.output_size() > 0) {
    const TensorInfo* output = context.find_tensor(node.output(0));
    if (output && output->known) op.output_shape = output->dims;
  }
  // The op's kernel shape as placesim exported it (sim/graph/kernel_shape_json.h), its samples
  // scaled as the op's costs are.
  const std::string kernel = string_attribute(node, "kernel", "");
  if (!kernel.empty()) {
    try {
      const Json document = Json::parse(kernel);
      op.kernel = std::make_shared<const KernelShape>(read_kernel_shape(JsonReader(document, "kernel")).with_samples(batch_scale));
    } catch (const std::exception& error) {
      context.fail("attribute kernel is not a kernel shape: " + std::string(error.what()));
    }
  }
}

}  // namespace placesim
