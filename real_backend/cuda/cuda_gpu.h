// Gpu: one GPU's compute stream, cuBLAS handle and the buffers its compute tasks work on (GEMM
// operands, the triad ring of the streaming kernel, the multiply-add array), and the kernels that
// run a task's ComputeWork on it.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "real_backend/runtime/cpu_kernels.h"

namespace placesim::real {

constexpr size_t kGpuRingBytes = 3 * (64u << 20);  // triad ring: 3 arrays of 64 MiB

/// One GPU's memory and streams.
struct Gpu {
  int ordinal = 0;
  cudaStream_t compute = nullptr;
  cublasHandle_t blas = nullptr;
  float *a = nullptr, *b = nullptr, *c = nullptr;  // GEMM operands
  size_t gemm_elements = 0;
  float* ring = nullptr;  // triad ring (3 equal arrays)
  size_t ring_elements = 0, ring_offset = 0;
  float* registers = nullptr;  // multiply-add array
  cudaEvent_t origin = nullptr;
  double origin_seconds = 0;
};


/// Threads that fill every SM of GPU `ordinal` (the multiply-add kernel's width).
size_t sm_threads(int ordinal);
/// Creates the GPU's stream, cuBLAS handle and buffers (GEMM operands of `gemm_elements` floats).
void gpu_allocate(Gpu& gpu, size_t gemm_elements);
/// Releases what gpu_allocate made; the Gpu is empty again.
void gpu_free(Gpu& gpu);
/// Enqueues the work on the GPU's compute stream (current device must be the GPU's).
void gpu_enqueue(Gpu& gpu, const ComputeWork& work);

}  // namespace placesim::real
