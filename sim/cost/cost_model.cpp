#include "sim/cost/cost_model.h"

#include <algorithm>

#include "sim/cost/fp8_casts.h"
#include "sim/cost/kernel_cost.h"
#include "sim/cost/layout_transposes.h"
#include "sim/cost/roofline.h"

namespace placesim {

double compute_seconds(const Task& task, Precision precision, MemoryFormat format, const ClusterDevice& device,
                       double lockstep_gemm_factor) {
  const DeviceSpec& spec = device.spec;
  // Kernels the framework runs around a GEMM: cuDNN's layout transposes, Transformer Engine's FP8 casts.
  const double transposes = layout_transpose_seconds(task, precision, format, spec) + fp8_cast_seconds(task, precision, spec);
  // The slowest GPU's pace: its SM clock, which GEMMs and convolutions follow (memory-bound kernels
  // follow the memory's clock, which does not vary so: docs/cost-model.md).
  const double slowest = spec.gemm_time_spread && is_gemm_kind(task.op_kind) ? lockstep_gemm_factor : 1.0;
  if (spec.kernel_model) {
    return (kernel_model_seconds(task, precision, spec) * slowest + transposes) / device.speed_factor *
               task.compute_scale +
           task.fixed_seconds;
  }
  if (task.flops <= 0 && task.memory_bytes <= 0) return task.fixed_seconds;
  const RooflineTerms terms = roofline_terms(task, precision, spec, spec.memory_efficiency_for(task.op_kind));
  return (std::max(terms.math_seconds, terms.memory_seconds) * slowest + transposes) / device.speed_factor *
             task.compute_scale +
         spec.kernel_launch_overhead_seconds + task.fixed_seconds;
}

double uncontended_transfer_seconds(double bytes, DeviceId from, DeviceId to, const Cluster& cluster) {
  if (from == to) return 0;
  return cluster.route_latency_seconds(from, to) + bytes / cluster.route_bandwidth_bytes_per_second(from, to);
}

}  // namespace placesim
