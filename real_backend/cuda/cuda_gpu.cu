#include "real_backend/cuda/cuda_gpu.h"

#include <algorithm>
#include <cmath>

#include "real_backend/cuda/cuda_status.h"

namespace placesim::real {
namespace {

__global__ void triad_kernel(float* a, const float* b, const float* c, size_t count, float s) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    a[i] = b[i] + s * c[i];
  }
}

__global__ void multiply_add_kernel(float* x, size_t count, long long passes) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  float value = x[i];
  for (long long pass = 0; pass < passes; ++pass) value = value * 0.999f + 0.001f;
  x[i] = value;
}


}  // namespace

size_t sm_threads(int ordinal) {
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, ordinal);
  return size_t(properties.multiProcessorCount) * properties.maxThreadsPerMultiProcessor;
}

void gpu_allocate(Gpu& gpu, size_t gemm_elements) {
  check(cudaSetDevice(gpu.ordinal), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&gpu.compute, cudaStreamNonBlocking), "cudaStreamCreate");
  check_blas(cublasCreate(&gpu.blas), "cublasCreate");
  check_blas(cublasSetStream(gpu.blas, gpu.compute), "cublasSetStream");
  gpu.gemm_elements = std::max<size_t>(gemm_elements, 1);
  for (float** matrix : {&gpu.a, &gpu.b, &gpu.c}) {
    check(cudaMalloc(matrix, gpu.gemm_elements * sizeof(float)), "GEMM operands");
    check(cudaMemset(*matrix, 0, gpu.gemm_elements * sizeof(float)), "cudaMemset");
  }
  gpu.ring_elements = kGpuRingBytes / (3 * sizeof(float));
  check(cudaMalloc(&gpu.ring, 3 * gpu.ring_elements * sizeof(float)), "triad ring");
  check(cudaMemset(gpu.ring, 0, 3 * gpu.ring_elements * sizeof(float)), "cudaMemset");
  check(cudaMalloc(&gpu.registers, sm_threads(gpu.ordinal) * sizeof(float)), "multiply-add array");
  check(cudaMemset(gpu.registers, 0, sm_threads(gpu.ordinal) * sizeof(float)), "cudaMemset");
  check(cudaEventCreate(&gpu.origin), "cudaEventCreate");
}

void gpu_free(Gpu& gpu) {
  cudaSetDevice(gpu.ordinal);
  if (gpu.compute) cudaStreamSynchronize(gpu.compute);
  for (float* pointer : {gpu.a, gpu.b, gpu.c, gpu.ring, gpu.registers}) {
    if (pointer) cudaFree(pointer);
  }
  if (gpu.blas) cublasDestroy(gpu.blas);
  if (gpu.origin) cudaEventDestroy(gpu.origin);
  if (gpu.compute) cudaStreamDestroy(gpu.compute);
  gpu = Gpu{};
}

void gpu_enqueue(Gpu& gpu, const ComputeWork& work) {
  switch (work.kind) {
    case WorkKind::kNone: return;
    case WorkKind::kGemm: {
      const int m = int(work.gemm.m), n = int(work.gemm.n), k = int(work.gemm.k);
      const float one = 1.0f, zero = 0.0f;
      for (int64_t r = 0; r < work.gemm.repeats; ++r) {
        check_blas(cublasSgemm(gpu.blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, gpu.a, m, gpu.b, k, &zero, gpu.c, m),
                   "cublasSgemm");
      }
      return;
    }
    case WorkKind::kStream: {
      size_t remaining = size_t(std::llround(work.bytes / 12.0));
      float* a = gpu.ring;
      const float* b = gpu.ring + gpu.ring_elements;
      const float* c = gpu.ring + 2 * gpu.ring_elements;
      while (remaining > 0) {
        size_t chunk = std::min(remaining, gpu.ring_elements - gpu.ring_offset);
        unsigned blocks = unsigned(std::min<size_t>((chunk + 255) / 256, 65535));
        triad_kernel<<<blocks, 256, 0, gpu.compute>>>(a + gpu.ring_offset, b + gpu.ring_offset, c + gpu.ring_offset,
                                                      chunk, 0.5f);
        remaining -= chunk;
        gpu.ring_offset = (gpu.ring_offset + chunk) % gpu.ring_elements;
      }
      check(cudaGetLastError(), "triad kernel launch");
      return;
    }
    case WorkKind::kArithmetic: {
      size_t threads = sm_threads(gpu.ordinal);
      long long passes = std::max(1LL, (long long)std::ceil(work.flops / (2.0 * double(threads))));
      multiply_add_kernel<<<unsigned((threads + 255) / 256), 256, 0, gpu.compute>>>(gpu.registers, threads, passes);
      check(cudaGetLastError(), "multiply-add kernel launch");
      return;
    }
  }
}

}  // namespace placesim::real
