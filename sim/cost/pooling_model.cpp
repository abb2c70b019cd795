#include "sim/cost/pooling_model.h"

#include <algorithm>

namespace placesim {

double pooling_kernel_seconds(double window_reads, double bytes, double bandwidth_bytes_per_second,
                              const KernelModel& model) {
  const double reads_per_second = model.pooling_reads_per_second_per_sm * static_cast<double>(model.sm_count);
  return std::max(window_reads / reads_per_second, bytes / (bandwidth_bytes_per_second * model.memory_efficiency));
}

}  // namespace placesim
