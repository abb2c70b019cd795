#include "bench/synthetic_plan.h"

#include <string>
#include <vector>

namespace placesim::bench {

Cluster ring_cluster(std::size_t devices, double bandwidth_bytes_per_second, double latency_seconds) {
  Cluster cluster;
  cluster.name = "ring" + std::to_string(devices);
  DeviceSpec spec;
  spec.id = "bench-gpu";
  spec.name = "Benchmark GPU";
  spec.kind = DeviceKind::kGpu;
  spec.peak_flops_per_second[Precision::kFp32] = 1e13;
  spec.memory_bytes = 16e9;
  spec.memory_bandwidth_bytes_per_second = 1e12;
  spec.kernel_launch_overhead_seconds = 5e-6;
  for (std::size_t i = 0; i < devices; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, static_cast<int>(i)};
    device.spec = spec;
    cluster.add_device(device, "GPU:" + std::to_string(i));
  }
  for (std::size_t i = 0; i < devices && devices > 1; ++i) {
    cluster.add_link(cluster.device(i).vertex, cluster.device((i + 1) % devices).vertex, LinkSpec{"bench", bandwidth_bytes_per_second, latency_seconds});
  }
  return cluster;
}

ExecutionPlan synthetic_plan(const Cluster& cluster, std::size_t tasks, std::size_t transfer_every) {
  const std::size_t devices = cluster.devices().size();
  ExecutionPlan plan;
  plan.name = "synthetic";
  plan.static_memory.assign(devices, StaticMemory{});
  plan.tasks.reserve(tasks);
  std::vector<TaskId> last(devices, tasks);          // last task of each device's chain
  std::vector<TaskId> incoming(devices, tasks);      // a transfer the next compute must wait for
  std::size_t round = 0;
  while (plan.tasks.size() < tasks) {
    for (std::size_t d = 0; d < devices && plan.tasks.size() < tasks; ++d) {
      Task task;
      task.id = plan.tasks.size();
      task.device = d;
      // Varied sizes so that devices drift apart and transfers really interleave.
      task.flops = 1e9 * static_cast<double>(1 + (task.id * 2654435761u) % 7);
      task.memory_bytes = 1e6;
      task.op_kind = OpKind::kMatMul;
      if (last[d] < tasks) task.deps.push_back(last[d]);
      if (incoming[d] < tasks) task.deps.push_back(incoming[d]);
      incoming[d] = tasks;
      last[d] = task.id;
      plan.tasks.push_back(std::move(task));
      if (devices > 1 && round % transfer_every == transfer_every - 1 && plan.tasks.size() < tasks) {
        Task transfer;
        transfer.id = plan.tasks.size();
        transfer.kind = TaskKind::kTransfer;
        transfer.phase = Phase::kTransfer;
        transfer.source = d;
        transfer.device = (d + 1) % devices;
        transfer.bytes = 4e6;
        transfer.deps = {last[d]};
        incoming[transfer.device] = transfer.id;
        plan.tasks.push_back(std::move(transfer));
      }
    }
    ++round;
  }
  for (Task& task : plan.tasks) task.name = std::string("t").append(std::to_string(task.id));
  return plan;
}

}  // namespace placesim::bench
