// Calibration: measures this machine with the executor's own kernels and dispatch loop, and
// turns the figures into a device profile, a link type and a cluster template in the formats of
// hardware_profiles/ (docs/scenario-format.md), every number citing "measured by placesim
// calibrate on DATE". How the figures map to profile fields: docs/real-backend.md.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "real_backend/cuda/cuda_executor.h"
#include "sim/core/json_reader.h"

namespace placesim::real {

using Progress = std::function<void(const std::string&)>;

struct RatePoint {
  double size = 0;  ///< GEMM side, or bytes per copy
  double value = 0; ///< FLOP/s, or seconds per copy
};

/// Everything calibrate measures on the CPU backend (medians of repeated timings).
struct CpuMeasurements {
  std::string date;                  ///< YYYY-MM-DD, local time
  std::string cpu_name;              ///< /proc/cpuinfo "model name"
  unsigned cores = 1;                ///< CPUs this process may use = devices in the cluster
  double physical_memory_bytes = 0;
  std::vector<RatePoint> sgemm;      ///< side -> FLOP/s (square sgemm, one thread)
  double sgemm_best_flops_per_second = 0;
  double sgemm_median_flops_per_second = 0;
  double arithmetic_flops_per_second = 0;  ///< the executor's multiply-add loop
  double stream_bytes_per_second = 0;      ///< the executor's triad
  double dispatch_overhead_seconds = 0;    ///< per task, through the executor
  std::vector<RatePoint> copies;           ///< bytes -> seconds per transfer, through the executor
  double copy_bytes_per_second = 0;
  double copy_latency_seconds = 0;
};

/// Takes ~10 s (`quick`: ~3 s, fewer sizes and repetitions).
CpuMeasurements measure_cpu(const Progress& progress, bool quick);

/// The files calibrate writes, as JSON.
struct CalibratedProfiles {
  std::string id;
  Json device;     ///< devices/ID.json
  /// Entries added to links.json: "ID-memcpy" (CPU); "ID-pcie" and "ID-peer" (CUDA).
  std::vector<std::pair<std::string, Json>> link_types;
  Json cluster;    ///< clusters/ID.json and the -o file
};

CalibratedProfiles cpu_profiles(const CpuMeasurements& measured, const std::string& id);
CalibratedProfiles cuda_profiles(const CudaMeasurements& measured, const CpuMeasurements& host,
                                 const std::string& id);

/// Writes `output` (DIR/NAME.json, the cluster file) and, in DIR as a profile directory usable
/// with --profiles DIR: devices/ID.json (plus devices/ID-host.json for CUDA), clusters/ID.json,
/// links.json (the existing or bundled link types plus the measured one), and a copy of every
/// bundled device profile and cluster template DIR lacks. Each file is written atomically; the
/// directory is checked before anything is written.
void write_profile_directory(const std::filesystem::path& output, const CalibratedProfiles& profiles,
                             const std::vector<std::pair<std::string, Json>>& extra_devices,
                             const std::filesystem::path& bundled_root);

/// Today's date, YYYY-MM-DD.
std::string today();

}  // namespace placesim::real
