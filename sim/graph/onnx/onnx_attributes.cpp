#include "sim/graph/onnx/onnx_attributes.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

}  // namespace

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

std::vector<int64_t> ints_attribute(const pb::NodeProto& node, const std::string& name, std::vector<int64_t> fallback) {
  const pb::AttributeProto* attribute = find_attribute(node, name);
  if (!attribute || attribute->ints_size() == 0) return fallback;
  return std::vector<int64_t>(attribute->ints().begin(), attribute->ints().end());
}

}  // namespace placesim
