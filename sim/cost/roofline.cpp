#include "sim/cost/roofline.h"

#include "sim/plan/kernel_precision.h"

namespace placesim {

RooflineTerms roofline_terms(const Task& task, Precision precision, const DeviceSpec& spec, double bandwidth_fraction) {
  RooflineTerms terms;
  const Precision kernel = kernel_precision(precision, task.op_kind, task.kernel.get());
  terms.math_seconds = task.flops / (spec.peak_for(kernel) * spec.efficiency_for(task.op_kind, task.flops));
  terms.memory_seconds = task.memory_bytes * kernel_bytes_scale(precision, task.op_kind, task.kernel.get()) /
                         (spec.memory_bandwidth_bytes_per_second * bandwidth_fraction);
  return terms;
}

}  // namespace placesim
