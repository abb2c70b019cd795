// Small hand-made devices, clusters and plans with round numbers, so that tests can derive the
// expected times from formulas.
#pragma once

#include <string>

#include "sim/cluster/cluster.h"
#include "sim/graph/op.h"
#include "sim/plan/execution_plan.h"

namespace placesim::testing {

/// A GPU with a round roofline: `peak` FLOP/s at fp32, `bandwidth` bytes/s of memory,
/// efficiency 1 for every op kind unless changed, no launch overhead.
/// A GEMM op: `forward_flops` forward and twice that backward, `parameters` weights and an
/// output of `output_bytes`, elements of `dtype_bytes`.
inline Op matmul_op(const std::string& name, double forward_flops, double parameters = 0, double output_bytes = 1e6,
                    double dtype_bytes = 4) {
  Op op;
  op.name = name;
  op.type = "MatMul";
  op.kind = OpKind::kMatMul;
  op.forward_flops = forward_flops;
  op.backward_flops = 2 * forward_flops;
  op.parameter_count = parameters;
  op.output_bytes = output_bytes;
  op.dtype_bytes = dtype_bytes;
  return op;
}

inline DeviceSpec round_gpu(double peak = 1e12, double bandwidth = 1e11, double launch_seconds = 0) {
  DeviceSpec spec;
  spec.id = "test-gpu";
  spec.name = "Test GPU";
  spec.kind = DeviceKind::kGpu;
  spec.peak_flops_per_second[Precision::kFp32] = peak;
  spec.memory_bytes = 16e9;
  spec.memory_bandwidth_bytes_per_second = bandwidth;
  spec.kernel_launch_overhead_seconds = launch_seconds;
  spec.default_compute_efficiency = 1.0;
  spec.memory_efficiency = 1.0;
  return spec;
}

inline LinkSpec round_link(double bandwidth = 1e9, double latency = 1e-5, const std::string& type = "test") {
  return LinkSpec{type, bandwidth, latency};
}

/// `n` GPUs named /job:localhost/replica:0/task:0/device:GPU:i, no links.
inline Cluster gpus(size_t n, const DeviceSpec& spec = round_gpu()) {
  Cluster cluster;
  cluster.name = "test";
  for (size_t i = 0; i < n; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, static_cast<int>(i)};
    device.spec = spec;
    cluster.add_device(device, "GPU:" + std::to_string(i));
  }
  return cluster;
}

/// `machines` machines of one GPU each (round_gpu), every two joined by a link of `bandwidth` and
/// `latency`; or (`switched`) each by one such link to one switch.
inline Cluster one_gpu_machines(size_t machines, double bandwidth, double latency, bool switched = false) {
  Cluster cluster;
  cluster.name = "test";
  for (size_t i = 0; i < machines; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"m" + std::to_string(i), 0, 0, DeviceKind::kGpu, 0};
    device.spec = round_gpu();
    device.node = static_cast<int>(i);
    cluster.add_device(device, "GPU:" + std::to_string(i));
  }
  if (switched) {
    const VertexId hub = cluster.add_switch("switch");
    for (size_t i = 0; i < machines; ++i) cluster.add_link(i, hub, round_link(bandwidth, latency));
    return cluster;
  }
  for (size_t i = 0; i < machines; ++i) {
    for (size_t j = i + 1; j < machines; ++j) cluster.add_link(i, j, round_link(bandwidth, latency));
  }
  return cluster;
}

inline Task compute_task(DeviceId device, double flops, double memory_bytes = 0, OpKind kind = OpKind::kMatMul) {
  Task task;
  task.kind = TaskKind::kCompute;
  task.device = device;
  task.flops = flops;
  task.memory_bytes = memory_bytes;
  task.op_kind = kind;
  return task;
}

inline Task transfer_task(DeviceId from, DeviceId to, double bytes) {
  Task task;
  task.kind = TaskKind::kTransfer;
  task.phase = Phase::kTransfer;
  task.source = from;
  task.device = to;
  task.bytes = bytes;
  return task;
}

/// Appends a task (its id becomes its index) and returns the id.
inline TaskId add(ExecutionPlan& plan, Task task, std::vector<TaskId> deps = {}) {
  task.id = plan.tasks.size();
  task.deps = std::move(deps);
  if (task.name.empty()) task.name = "t" + std::to_string(task.id);
  plan.tasks.push_back(std::move(task));
  return plan.tasks.back().id;
}

inline ExecutionPlan empty_plan(const Cluster& cluster) {
  ExecutionPlan plan;
  plan.name = "test";
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});
  return plan;
}

}  // namespace placesim::testing
