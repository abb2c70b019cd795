// Builds an execution plan by hand (no scenario file, no model) and simulates it with the
// SimGrid engine and the analytical tier: two GPUs joined by one link, a GEMM on each and the
// first one's output sent to the second. Prints each task's interval and the step time, next to
// the time worked out by hand.
//
//   build/examples/hand_made_plan
#include <cstdio>

#include "sim/engine/engine_factory.h"
#include "sim/report/metrics.h"

using namespace placesim;

int main() {
  // Two GPUs with a round roofline: 10 TFLOP/s at fp32, 500 GB/s of memory, no launch overhead.
  DeviceSpec gpu;
  gpu.id = "round-gpu";
  gpu.name = "Round GPU";
  gpu.kind = DeviceKind::kGpu;
  gpu.peak_flops_per_second[Precision::kFp32] = 10e12;
  gpu.memory_bytes = 16e9;
  gpu.memory_bandwidth_bytes_per_second = 500e9;
  gpu.default_compute_efficiency = 1.0;
  gpu.memory_efficiency = 1.0;

  Cluster cluster;
  cluster.name = "two_gpus";
  for (int i = 0; i < 2; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, i};
    device.spec = gpu;
    cluster.add_device(device, "GPU:" + std::to_string(i));
  }
  // One link of 25 GB/s and 2 us between them (about one NVLink 2 brick).
  cluster.add_link(0, 1, LinkSpec{"example-link", 25e9, 2e-6});

  ExecutionPlan plan;
  plan.name = "hand_made";
  plan.static_memory.assign(cluster.devices().size(), StaticMemory{});
  auto add = [&](Task task, std::vector<TaskId> deps) {
    task.id = plan.tasks.size();
    task.deps = std::move(deps);
    plan.tasks.push_back(task);
    return task.id;
  };
  Task gemm;
  gemm.kind = TaskKind::kCompute;
  gemm.op_kind = OpKind::kMatMul;
  gemm.flops = 2.0 * 4096 * 4096 * 4096;  // a 4096^3 GEMM: 137.4 GFLOP
  gemm.device = 0;
  gemm.name = "gemm on GPU:0";
  const TaskId first = add(gemm, {});
  Task send;
  send.kind = TaskKind::kTransfer;
  send.phase = Phase::kTransfer;
  send.source = 0;
  send.device = 1;
  send.bytes = 4096.0 * 4096 * 4;  // its fp32 output: 67.1 MB
  send.name = "output GPU:0 -> GPU:1";
  const TaskId sent = add(send, {first});
  gemm.device = 1;
  gemm.name = "gemm on GPU:1";
  add(gemm, {sent});

  // By hand: 2 x 137.44 GFLOP / 10 TFLOP/s + 67.1 MB / 25 GB/s + 2 us = 27.488 + 2.684 + 0.002
  // = 30.174 ms, in both tiers (one transfer alone on its link: no sharing).
  const double by_hand = 2 * gemm.flops / 10e12 + send.bytes / 25e9 + 2e-6;
  for (Tier tier : {Tier::kSimulated, Tier::kAnalytical}) {
    const Timeline timeline = make_engine(tier)->simulate(plan, cluster);
    std::printf("%s (%s):\n", to_string(tier).c_str(), timeline.source.c_str());
    for (const Task& task : plan.tasks) {
      const TaskInterval& interval = timeline.tasks[task.id];
      std::printf("  %-24s %9.3f .. %9.3f ms\n", task.name.c_str(), interval.start_seconds * 1e3,
                  interval.end_seconds * 1e3);
    }
    const RunMetrics metrics = compute_metrics(plan, cluster, timeline);
    std::printf("  step time %.3f ms (by hand %.3f ms)\n", metrics.step_time_seconds * 1e3, by_hand * 1e3);
  }
  return 0;
}
