#include "sim/spec/parallelism_sizes.h"

namespace placesim {

std::string parallelism_sizes_text(const ParallelismOptions& options) {
  const std::string tensor = " x tensor " + std::to_string(options.tensor);
  if (!options.stage_replicas.empty()) {
    std::string widths;
    for (int64_t width : options.stage_replicas) widths += (widths.empty() ? "" : " + ") + std::to_string(width);
    return "stage replicas " + widths + tensor;
  }
  return "data " + std::to_string(options.data) + " x pipeline " + std::to_string(options.pipeline) +
         (options.context > 1 ? " x context " + std::to_string(options.context) : std::string()) + tensor;
}

}  // namespace placesim
