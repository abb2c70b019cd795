// CUDA calibration: GPU 0's SGEMM rate over a size sweep, its streaming bandwidth (a triad
// kernel), host <-> GPU and GPU <-> GPU copy rates and latencies, and the executor's launch
// overhead per task, all timed with CUDA events.
#include <cuda_runtime.h>

#include <vector>

#include "real_backend/cuda/cuda_gpu.h"
#include "real_backend/cuda/cuda_module_functions.h"
#include "real_backend/cuda/cuda_status.h"
#include "sim/cluster/cluster.h"
#include "sim/core/quantile.h"
#include "sim/plan/execution_plan.h"

namespace placesim::real {
namespace {

/// Seconds per call, timed with events on `stream` (median of `calls`).
template <typename Call>
double event_seconds(cudaStream_t stream, int calls, Call call) {
  cudaEvent_t start, end;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&end), "cudaEventCreate");
  call();  // warm-up
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    call();
    check(cudaEventRecord(end, stream), "cudaEventRecord");
    check(cudaEventSynchronize(end), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, end), "cudaEventElapsedTime");
    times.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return median(times);
}


}  // namespace

CudaMeasurements measure_cuda_here(const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  CudaMeasurements m;
  m.device_count = require_cuda_devices_here();
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  m.name = properties.name;
  m.compute_capability = std::to_string(properties.major) + "." + std::to_string(properties.minor);
  char bus[32] = {0};
  cudaDeviceGetPCIBusId(bus, sizeof bus, 0);
  m.pci_bus_id = bus;
  m.memory_bytes = double(properties.totalGlobalMem);
  say("calibrating " + m.name + " (GPU 0 of " + std::to_string(m.device_count) + ")");

  Gpu gpu;
  gpu.ordinal = 0;
  const int64_t largest = 8192;
  gpu_allocate(gpu, size_t(largest * largest));
  std::vector<double> rates;
  // Sides 256 * 2^(i/2): powers of two and sizes in between, as the executor's square GEMMs
  // (side = cbrt(F/2)) are of any size and cuBLAS is slower on unaligned ones.
  for (int64_t side : {256, 362, 512, 724, 1024, 1448, 2048, 2896, 4096, 5793, 8192}) {
    ComputeWork work;
    work.kind = WorkKind::kGemm;
    work.gemm = {side, side, side, 1};
    double seconds = event_seconds(gpu.compute, 5, [&] { gpu_enqueue(gpu, work); });
    rates.push_back(work.gemm.flops() / seconds);
    m.sgemm_rate_by_flops.emplace_back(work.gemm.flops(), rates.back());
    say("  sgemm " + std::to_string(side) + "^3: " + std::to_string(rates.back() / 1e12) + " TFLOP/s");
  }
  m.sgemm_flops_per_second = *std::max_element(rates.begin(), rates.end());
  m.sgemm_typical_flops_per_second = median(rates);
  ComputeWork triad;
  triad.kind = WorkKind::kStream;
  triad.bytes = double(kGpuRingBytes) * 4;
  m.stream_bytes_per_second = triad.bytes / event_seconds(gpu.compute, 5, [&] { gpu_enqueue(gpu, triad); });
  say("  triad: " + std::to_string(m.stream_bytes_per_second / 1e9) + " GB/s");

  void* host = nullptr;
  const size_t big = 64u << 20, small = 4096;
  check(cudaMallocHost(&host, big), "pinned host buffer");
  double big_seconds = event_seconds(gpu.compute, 5, [&] {
    check(cudaMemcpyAsync(gpu.ring, host, big, cudaMemcpyHostToDevice, gpu.compute), "cudaMemcpyAsync");
  });
  double small_seconds = event_seconds(gpu.compute, 21, [&] {
    check(cudaMemcpyAsync(gpu.ring, host, small, cudaMemcpyHostToDevice, gpu.compute), "cudaMemcpyAsync");
  });
  m.host_to_device_bytes_per_second = double(big) / big_seconds;
  m.host_to_device_latency_seconds = std::max(0.0, small_seconds - double(small) / m.host_to_device_bytes_per_second);
  say("  host to device: " + std::to_string(m.host_to_device_bytes_per_second / 1e9) + " GB/s, latency " +
      std::to_string(m.host_to_device_latency_seconds * 1e6) + " us");
  cudaFreeHost(host);
  if (m.device_count > 1) {
    void* peer = nullptr;
    check(cudaSetDevice(1), "cudaSetDevice");
    check(cudaMalloc(&peer, big), "peer buffer");
    check(cudaSetDevice(0), "cudaSetDevice");
    int can_access = 0;
    cudaDeviceCanAccessPeer(&can_access, 0, 1);
    if (can_access) {
      cudaDeviceEnablePeerAccess(1, 0);
      cudaGetLastError();
    }
    double peer_big = event_seconds(gpu.compute, 5, [&] {
      check(cudaMemcpyPeerAsync(peer, 1, gpu.ring, 0, big, gpu.compute), "cudaMemcpyPeerAsync");
    });
    double peer_small = event_seconds(gpu.compute, 21, [&] {
      check(cudaMemcpyPeerAsync(peer, 1, gpu.ring, 0, small, gpu.compute), "cudaMemcpyPeerAsync");
    });
    m.peer_bytes_per_second = double(big) / peer_big;
    m.peer_latency_seconds = std::max(0.0, peer_small - double(small) / m.peer_bytes_per_second);
    say("  GPU 0 -> GPU 1: " + std::to_string(m.peer_bytes_per_second / 1e9) + " GB/s");
    cudaSetDevice(1);
    cudaFree(peer);
    cudaSetDevice(0);
  }
  gpu_free(gpu);

  // Per-task overhead through the executor: a chain of near-empty triads on GPU 0.
  Cluster cluster;
  cluster.name = "calibration";
  ClusterDevice device;
  device.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, 0};
  device.spec.id = "calibration";
  device.spec.kind = DeviceKind::kGpu;
  device.spec.peak_flops_per_second[Precision::kFp32] = m.sgemm_flops_per_second;
  device.spec.memory_bytes = m.memory_bytes;
  device.spec.memory_bandwidth_bytes_per_second = m.stream_bytes_per_second;
  device.spec.default_compute_efficiency = 1.0;
  device.spec.memory_efficiency = 1.0;
  cluster.add_device(device, "GPU:0");
  ExecutionPlan plan;
  plan.name = "dispatch";
  plan.static_memory.assign(1, StaticMemory{});
  for (TaskId id = 0; id < 1000; ++id) {
    Task task;
    task.id = id;
    task.name = "t" + std::to_string(id);
    task.op_kind = OpKind::kElementwise;
    task.memory_bytes = 12;
    if (id > 0) task.deps = {id - 1};
    plan.tasks.push_back(task);
  }
  ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 5;
  std::unique_ptr<Executor> executor = make_cuda_executor_here(options);
  executor->simulate(plan, cluster);
  m.launch_overhead_seconds = median(executor->timed_makespans()) / double(plan.tasks.size());
  say("  launch overhead (enqueued ahead): " + std::to_string(m.launch_overhead_seconds * 1e6) + " us per task");
  options.dispatch = GpuDispatch::kLoop;  // for comparison only: a host round trip per task
  std::unique_ptr<Executor> loop_executor = make_cuda_executor_here(options);
  loop_executor->simulate(plan, cluster);
  say("  (dispatch loop, for comparison: " +
      std::to_string(median(loop_executor->timed_makespans()) / double(plan.tasks.size()) * 1e6) + " us per task)");
  return m;
}

}  // namespace placesim::real
