#include "sim/spec/nccl_version.h"

#include <regex>

namespace placesim {

std::string to_string(NcclVersion version) { return std::to_string(version.major) + "." + std::to_string(version.minor); }

std::optional<NcclVersion> parse_nccl_version(const std::string& text) {
  static const std::regex pattern(R"(([12])\.([0-9]{1,2})(\.[0-9]{1,4})?)");
  std::smatch match;
  if (text.size() > 16 || !std::regex_match(text, match, pattern)) return std::nullopt;
  return NcclVersion{std::stoi(match[1].str()), std::stoi(match[2].str())};
}

}  // namespace placesim
