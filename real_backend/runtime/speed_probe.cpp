#include "real_backend/runtime/speed_probe.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "real_backend/runtime/cpu_kernels.h"
#include "real_backend/runtime/scheduler.h"
#include "real_backend/runtime/worker_thread.h"
#include "sim/core/quantile.h"

namespace placesim::real {
namespace {

std::string rate_text(double rate, double scale, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f %s", rate / scale, unit);
  return text;
}

}  // namespace

double median_call_seconds(const std::function<void()>& call, double min_seconds, int min_calls) {
  std::vector<double> times;
  const double begin = monotonic_seconds();
  while (static_cast<int>(times.size()) < min_calls || monotonic_seconds() - begin < min_seconds) {
    double start = monotonic_seconds();
    call();
    times.push_back(monotonic_seconds() - start);
  }
  return median(times);
}

MachineSpeed probe_machine_speed(double min_seconds) {
  MachineSpeed speed;
  WorkerThread core0(0u);  // pinned like the executor's first device
  core0.run_and_wait([&] {
    Workspace workspace;
    const GemmShape shape{kProbeGemmSide, kProbeGemmSide, kProbeGemmSide, 1};
    workspace.gemm(shape);  // allocate and warm up
    speed.gemm_flops_per_second = shape.flops() / median_call_seconds([&] { workspace.gemm(shape); }, min_seconds, 5);
    const double arithmetic_flops = 2e7;
    workspace.arithmetic(arithmetic_flops);
    speed.arithmetic_flops_per_second =
        arithmetic_flops / median_call_seconds([&] { workspace.arithmetic(arithmetic_flops); }, min_seconds, 5);
    const double stream_bytes = static_cast<double>(kStreamPoolBytes);  // one pass around the ring
    workspace.stream(stream_bytes);
    speed.stream_bytes_per_second =
        stream_bytes / median_call_seconds([&] { workspace.stream(stream_bytes); }, 2 * min_seconds, 5);
  });
  return speed;
}

MachineSpeed profile_speed(const DeviceSpec& device) {
  const double peak = device.peak_for(Precision::kFp32);
  const double gemm_flops = 2.0 * std::pow(static_cast<double>(kProbeGemmSide), 3);
  MachineSpeed speed;
  speed.gemm_flops_per_second = peak * device.efficiency_for(OpKind::kMatMul, gemm_flops);
  speed.arithmetic_flops_per_second = peak * device.default_compute_efficiency;
  speed.stream_bytes_per_second = device.memory_bandwidth_bytes_per_second * device.memory_efficiency;
  return speed;
}

std::string speed_drift(const std::vector<MachineSpeed>& probes, const MachineSpeed& profile, double tolerance) {
  struct Kernel {
    const char* name;
    double MachineSpeed::*rate;
    double scale;
    const char* unit;
  };
  const Kernel kernels[] = {
      {"sgemm 256^3", &MachineSpeed::gemm_flops_per_second, 1e9, "GFLOP/s"},
      {"multiply-add loop", &MachineSpeed::arithmetic_flops_per_second, 1e9, "GFLOP/s"},
      {"triad", &MachineSpeed::stream_bytes_per_second, 1e9, "GB/s"},
  };
  std::string drifted;
  for (const Kernel& kernel : kernels) {
    const double expected = profile.*kernel.rate;
    if (!(expected > 0)) continue;
    std::string seen;
    bool off = false;
    for (const MachineSpeed& probe : probes) {
      const double rate = probe.*kernel.rate;
      off = off || std::abs(rate / expected - 1) > tolerance;
      seen += (seen.empty() ? "" : " then ") + rate_text(rate, kernel.scale, kernel.unit);
    }
    if (!off) continue;
    drifted += (drifted.empty() ? "" : "; ") + std::string(kernel.name) + " " + seen + " (profile " +
               rate_text(expected, kernel.scale, kernel.unit) + ")";
  }
  return drifted;
}

}  // namespace placesim::real
