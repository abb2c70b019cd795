// What the importer knows of an ONNX tensor after shape inference (element type, dims) and the
// shape arithmetic it does itself: element sizes, einsum output dims. Internal to placesim_onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace placesim {

struct TensorInfo {
  int32_t element_type = 0;
  std::vector<int64_t> dims;
  bool known = false;     ///< every dimension has a value
  bool constant = false;  ///< an initializer or a Constant node's output
  bool initializer = false;
};

/// "[1, 3, 224, 224]".
std::string shape_text(const std::vector<int64_t>& shape);

/// True for floating-point element types (and UNDEFINED): those take the run's precision.
bool is_float_type(int32_t type);
/// Size of an element of an integer, boolean or string type (int64: 8, int32: 4, bool: 1).
double integer_type_bytes(int32_t type);
/// Element size of `info`: `float_bytes` (the run's precision) for floating point, else its own.
double element_bytes(const TensorInfo& info, double float_bytes);
/// Bytes of `info`: elements x element_bytes.
double tensor_bytes(const TensorInfo& info, double float_bytes);

/// Every tensor of an inferred graph by name: value_info, outputs, inputs, then initializers
/// (sparse ones with their dense dims), which are known and constant; Constant nodes' outputs are constant.
std::unordered_map<std::string, TensorInfo> tensor_infos(const ::ONNX_NAMESPACE::GraphProto& graph);

/// Output dims of an einsum with an explicit output ("ab,bc->ac") on inputs of `shapes`; ONNX
/// 1.12 infers only its rank. False without "->", with "..." or when the shapes do not fit.
bool einsum_output_shape(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes,
                         std::vector<int64_t>* output);

}  // namespace placesim
