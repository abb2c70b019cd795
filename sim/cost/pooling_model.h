// Pooling kernels (max and average pooling, forward and backward): bound by the window elements
// they read from cache or by the bytes they move, whichever is slower (docs/cost-model.md,
// "Pooling kernels"). Fitted per device on measured cuDNN pooling kernels.
#pragma once

#include "sim/cluster/kernel_model.h"

namespace placesim {

/// Seconds of a pooling kernel reading `window_reads` window elements and moving `bytes` on a
/// device of `bandwidth_bytes_per_second` whose kernel model has a pooling fit
/// (pooling_reads_per_second_per_sm > 0): max(window_reads / (rate x SMs), bytes / (bandwidth x
/// memory_efficiency)), no fixed cost.
double pooling_kernel_seconds(double window_reads, double bytes, double bandwidth_bytes_per_second,
                              const KernelModel& model);

}  // namespace placesim
