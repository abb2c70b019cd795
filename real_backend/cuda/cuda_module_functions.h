// The CUDA module's implementations of the functions cuda_executor.h declares (cuda_module.cpp
// forwards the public ones to them through CudaModuleFunctions): their own names, so that a call
// inside the module never binds to the loader's function of the same name, which the program
// exports. Module-internal (hidden visibility).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "real_backend/cuda/cuda_executor.h"

namespace placesim::real {

/// The number of CUDA GPUs; InputError naming what is missing when there is none.
int require_cuda_devices_here();
std::unique_ptr<Executor> make_cuda_executor_here(ExecutionOptions options);
CudaMeasurements measure_cuda_here(const std::function<void(const std::string&)>& progress);

}  // namespace placesim::real
