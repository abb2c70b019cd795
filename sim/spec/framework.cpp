#include "sim/spec/framework.h"

#include <utility>

namespace placesim {
namespace {

const std::vector<std::pair<Framework, std::string>>& names() {
  static const std::vector<std::pair<Framework, std::string>> table = {
      {Framework::kLinksOnly, "links"},     {Framework::kTensorFlow1, "tensorflow-1"},
      {Framework::kHorovod, "horovod"},     {Framework::kPyTorchDdp, "pytorch-ddp"},
      {Framework::kMegatron, "megatron"},
  };
  return table;
}

}  // namespace

std::string to_string(Framework framework) {
  for (const auto& [value, name] : names()) {
    if (value == framework) return name;
  }
  return "links";
}

std::optional<Framework> parse_framework(const std::string& text) {
  for (const auto& [value, name] : names()) {
    if (name == text) return value;
  }
  return std::nullopt;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> result;
  for (const auto& entry : names()) result.push_back(entry.second);
  return result;
}

bool has_parameter_servers(Framework framework) {
  return framework == Framework::kLinksOnly || framework == Framework::kTensorFlow1;
}

}  // namespace placesim
