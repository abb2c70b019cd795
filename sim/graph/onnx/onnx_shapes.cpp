#include "sim/graph/onnx/onnx_shapes.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "sim/graph/onnx/onnx_dims.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

TensorInfo value_tensor_info(const pb::ValueInfoProto& info) {
  TensorInfo tensor;
  if (!info.type().has_tensor_type()) return tensor;
  const auto& type = info.type().tensor_type();
  tensor.element_type = type.elem_type();
  tensor.known = type.has_shape();
  if (type.has_shape()) {
    for (const auto& dim : type.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) tensor.known = false;
      tensor.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
  }
  return tensor;
}

TensorInfo initializer_tensor_info(const pb::TensorProto& initializer) {
  TensorInfo tensor;
  tensor.element_type = initializer.data_type();
  tensor.dims.assign(initializer.dims().begin(), initializer.dims().end());
  tensor.known = tensor.constant = tensor.initializer = true;
  return tensor;
}

}  // namespace

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

double element_bytes(const TensorInfo& info, double float_bytes) {
  return is_float_type(info.element_type) ? float_bytes : integer_type_bytes(info.element_type);
}

double tensor_bytes(const TensorInfo& info, double float_bytes) {
  return dims_product(info.dims) * element_bytes(info, float_bytes);
}

std::unordered_map<std::string, TensorInfo> tensor_infos(const pb::GraphProto& graph) {
  std::unordered_map<std::string, TensorInfo> tensors;
  for (const auto& info : graph.value_info()) tensors[info.name()] = value_tensor_info(info);
  for (const auto& info : graph.output()) {
    if (!tensors.count(info.name()) || !tensors[info.name()].known) tensors[info.name()] = value_tensor_info(info);
  }
  for (const auto& info : graph.input()) tensors[info.name()] = value_tensor_info(info);
  for (const auto& node : graph.node()) {
    if (node.op_type() == "Constant" && node.domain().empty()) {
      for (const auto& output : node.output()) tensors[output].constant = true;
    }
  }
  for (const auto& initializer : graph.initializer()) tensors[initializer.name()] = initializer_tensor_info(initializer);
  for (const auto& sparse : graph.sparse_initializer()) {
    pb::TensorProto values = sparse.values();
    values.clear_dims();
    for (int64_t dim : sparse.dims()) values.add_dims(dim);
    tensors[values.name()] = initializer_tensor_info(values);
  }
  return tensors;
}

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

}  // namespace placesim
