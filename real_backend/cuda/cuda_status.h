// Turning CUDA and cuBLAS status codes into exceptions: out of device memory is the user's
// input (the plan does not fit), anything else an internal error.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "sim/core/input_error.h"

namespace placesim::real {

inline void check(cudaError_t status, const char* what) {
  if (status == cudaErrorMemoryAllocation) {
    throw InputError("--backend cuda", "", std::string("CUDA out of memory (") + what + ")");
  }
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

inline void check_blas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(status));
}

}  // namespace placesim::real
