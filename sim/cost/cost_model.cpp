#include "sim/cost/cost_model.h"

#include <algorithm>

#include "sim/cost/kernel_cost.h"
#include "sim/plan/kernel_precision.h"

namespace placesim {

double compute_seconds(const Task& task, Precision precision, const ClusterDevice& device) {
  const DeviceSpec& spec = device.spec;
  if (spec.kernel_model) {
    return kernel_model_seconds(task, precision, spec) / device.speed_factor * task.compute_scale + task.fixed_seconds;
  }
  if (task.flops <= 0 && task.memory_bytes <= 0) return task.fixed_seconds;
  const Precision kernel = kernel_precision(precision, task.op_kind);
  double math_seconds = task.flops / (spec.peak_for(kernel) * spec.efficiency_for(task.op_kind, task.flops));
  const bool reduction = task.op_kind == OpKind::kNormalization || task.op_kind == OpKind::kReduction;
  double memory_seconds = task.memory_bytes * kernel_bytes_scale(precision, task.op_kind) /
                          (spec.memory_bandwidth_bytes_per_second * spec.memory_efficiency_for(reduction));
  return std::max(math_seconds, memory_seconds) / device.speed_factor * task.compute_scale +
         spec.kernel_launch_overhead_seconds + task.fixed_seconds;
}

double uncontended_transfer_seconds(double bytes, DeviceId from, DeviceId to, const Cluster& cluster) {
  if (from == to) return 0;
  return cluster.route_latency_seconds(from, to) + bytes / cluster.route_bandwidth_bytes_per_second(from, to);
}

}  // namespace placesim
