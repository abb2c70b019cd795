#include "sim/core/memory_format.h"

namespace placesim {

std::string to_string(MemoryFormat format) { return format == MemoryFormat::kNhwc ? "nhwc" : "nchw"; }

std::optional<MemoryFormat> parse_memory_format(const std::string& text) {
  if (text == "nchw") return MemoryFormat::kNchw;
  if (text == "nhwc") return MemoryFormat::kNhwc;
  return std::nullopt;
}

std::vector<std::string> memory_format_names() { return {"nchw", "nhwc"}; }

}  // namespace placesim
