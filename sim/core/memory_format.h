// MemoryFormat: the order in which a framework keeps a 4-D activation in memory, NCHW (PyTorch's
// and tf_cnn_benchmarks' default on GPUs) or NHWC ("channels last"). Tensor-core convolutions run
// NHWC kernels, so under NCHW cuDNN transposes around them (sim/cost/layout_transposes.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace placesim {

enum class MemoryFormat { kNchw, kNhwc };

std::string to_string(MemoryFormat format);  ///< "nchw", "nhwc"
std::optional<MemoryFormat> parse_memory_format(const std::string& text);
std::vector<std::string> memory_format_names();

}  // namespace placesim
