// The CUDA executor and CUDA calibration. Built from cuda_executor.cu when CMake finds nvcc
// (CMAKE_CUDA_COMPILER) into a module, libplacesim_cuda.so, that cuda_module.cpp opens on first
// use (so that no other command loads the CUDA runtime, cuBLAS and NCCL: start-up,
// docs/performance.md); otherwise cuda_unavailable.cpp provides the same functions, which
// report that this build has no CUDA support. Either way, asking for CUDA on a machine without
// a usable GPU is an InputError (exit status 2), never a crash.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <utility>

#include "real_backend/runtime/executor.h"

namespace placesim::real {

/// True when this build includes the CUDA executor.
bool built_with_cuda();

/// Number of usable CUDA devices; InputError saying why when there is none (no driver, driver
/// too old for this runtime, no GPU, or a build without CUDA).
int require_cuda_devices();

/// GPUs run on one compute stream each (cuBLAS sgemm, a triad kernel), transfers on copy
/// streams (cudaMemcpyPeerAsync, pinned host memory), timed with CUDA events; CPU devices of
/// the plan run as CPU-executor worker threads.
std::unique_ptr<Executor> make_cuda_executor(ExecutionOptions options);

/// What calibration measures on one GPU (all medians).
struct CudaMeasurements {
  std::string name;                  ///< cudaDeviceProp::name
  std::string compute_capability;    ///< "9.0"
  std::string pci_bus_id;
  double memory_bytes = 0;           ///< cudaDeviceProp::totalGlobalMem
  double sgemm_flops_per_second = 0; ///< best over the size sweep
  double sgemm_typical_flops_per_second = 0;  ///< median over the sweep
  /// (FLOPs of one call, FLOP/s) per size of the sweep, sizes as the executor's GEMMs have them
  std::vector<std::pair<double, double>> sgemm_rate_by_flops;
  double stream_bytes_per_second = 0;         ///< triad kernel
  double launch_overhead_seconds = 0;         ///< per task through the executor's dispatch loop
  double host_to_device_bytes_per_second = 0; ///< pinned
  double host_to_device_latency_seconds = 0;
  double peer_bytes_per_second = 0;           ///< GPU 0 -> GPU 1, 0 with one GPU
  double peer_latency_seconds = 0;
  int device_count = 0;
};

/// Measures GPU 0 (and GPU 0 -> 1 when there are two), reporting progress lines.
CudaMeasurements measure_cuda(const std::function<void(const std::string&)>& progress);

/// What the CUDA module gives its loader: the functions above. The module resolves everything
/// else it uses (worker threads, host roles, the host group) in the program that opens it, which
/// therefore exports its symbols (CMake ENABLE_EXPORTS).
struct CudaModuleFunctions {
  int (*require_cuda_devices)() = nullptr;
  std::unique_ptr<Executor> (*make_cuda_executor)(ExecutionOptions options) = nullptr;
  CudaMeasurements (*measure_cuda)(const std::function<void(const std::string&)>& progress) = nullptr;
};

/// The module's one exported symbol: fills `functions`.
inline constexpr const char* kCudaModuleEntry = "placesim_cuda_module_functions";
using CudaModuleEntry = void (*)(CudaModuleFunctions* functions);

}  // namespace placesim::real
