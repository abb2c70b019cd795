// MachineSpeed: how fast this machine's CPU executor kernels (square sgemm, multiply-add loop,
// triad) run right now on the first usable CPU, and how far that is from a device profile's
// rates. Load from other virtual machines on the same host (a shared core, a busy memory bus)
// slows these kernels without showing in /proc/stat, so MachineLoad cannot see it; this can.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/cluster/device_spec.h"

namespace placesim::real {

struct MachineSpeed {
  double gemm_flops_per_second = 0;          ///< square sgemm of side kProbeGemmSide, one thread
  double arithmetic_flops_per_second = 0;    ///< the executor's multiply-add loop, one thread
  double stream_bytes_per_second = 0;        ///< the executor's triad over its ring, one thread
};

/// Median seconds per call of `call`, repeated for at least `min_seconds` and `min_calls`.
double median_call_seconds(const std::function<void()>& call, double min_seconds, int min_calls);

/// Side of the probe's square sgemm: mid-range of calibrate's sweep (32..1024).
constexpr int kProbeGemmSide = 256;

/// Runs the three kernels on a worker pinned to the first usable CPU, each for at least
/// `min_seconds` and 5 calls, and returns the median rates.
MachineSpeed probe_machine_speed(double min_seconds);

/// The rates `device`'s profile predicts for the same kernels: the sgemm at peak fp32 x the
/// matmul efficiency for its FLOPs, the loop at peak x the default efficiency, the triad at
/// memory bandwidth x memory efficiency.
MachineSpeed profile_speed(const DeviceSpec& device);

/// Relative deviation above which a measurement is reported as not made on the profiled machine:
/// the CPU backend's own accuracy target (docs/real-backend.md), so that a drift larger than
/// what validation judges is never silent.
constexpr double kSpeedTolerance = 0.15;

/// Each kernel whose rate in any of `probes` is more than `tolerance` away from `profile`, as
/// "triad 8.6 then 16.1 GB/s (profile 16.0 GB/s)", joined by "; "; empty when all are within it.
std::string speed_drift(const std::vector<MachineSpeed>& probes, const MachineSpeed& profile,
                        double tolerance = kSpeedTolerance);

}  // namespace placesim::real
