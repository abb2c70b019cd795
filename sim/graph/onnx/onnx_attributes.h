// Attributes of an ONNX node by name, with a fallback when absent: what the importer and the
// window checks read of a node besides its inputs. Internal to placesim_onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace placesim {

/// The attribute `name` of `node`, or nullptr.
const ::ONNX_NAMESPACE::AttributeProto* find_attribute(const ::ONNX_NAMESPACE::NodeProto& node, const std::string& name);
/// A string, integer or integer-list attribute, or `fallback` when absent (or an empty list).
std::string string_attribute(const ::ONNX_NAMESPACE::NodeProto& node, const std::string& name, const std::string& fallback);
int64_t int_attribute(const ::ONNX_NAMESPACE::NodeProto& node, const std::string& name, int64_t fallback);
std::vector<int64_t> ints_attribute(const ::ONNX_NAMESPACE::NodeProto& node, const std::string& name,
                                    std::vector<int64_t> fallback);

}  // namespace placesim
