#include "sim/spec/tensorflow_version.h"

namespace placesim {
namespace {

constexpr int kLastMinor = 15;  // TensorFlow 1.15 was the last 1.x release

}  // namespace

std::string to_string(TensorFlowVersion version) { return "1." + std::to_string(version.minor); }

std::optional<TensorFlowVersion> parse_tensorflow_version(const std::string& text) {
  for (int minor = 0; minor <= kLastMinor; ++minor) {
    if (text == to_string(TensorFlowVersion{minor})) return TensorFlowVersion{minor};
  }
  return std::nullopt;
}

std::vector<std::string> tensorflow_version_names() {
  std::vector<std::string> names;
  for (int minor = 0; minor <= kLastMinor; ++minor) names.push_back(to_string(TensorFlowVersion{minor}));
  return names;
}

}  // namespace placesim
