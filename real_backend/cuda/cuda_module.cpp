// The CUDA executor's entry points in a build with CUDA: they open the module built from
// cuda_executor.cu (libplacesim_cuda.so) on first use and forward to it. Linking the executor
// into placesim loaded the CUDA runtime, cuBLAS and NCCL into every invocation, `--version`
// included (start-up, docs/performance.md).
#include <mutex>
#include <string>

#include "real_backend/cuda/cuda_executor.h"
#include "sim/core/input_error.h"
#include "sim/core/module_loader.h"

namespace placesim::real {
namespace {

const CudaModuleFunctions& cuda_module() {
  static CudaModuleFunctions functions;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string error;
    void* module = open_placesim_module("libplacesim_cuda.so", "PLACESIM_CUDA_MODULE", PLACESIM_CUDA_MODULE_PATH, &error);
    auto entry = reinterpret_cast<CudaModuleEntry>(module_symbol(module, kCudaModuleEntry));
    if (!entry) {
      throw InputError("--backend cuda", "",
                       (module ? std::string("libplacesim_cuda.so has no ") + kCudaModuleEntry : error) +
                           " (or use --backend cpu)");
    }
    entry(&functions);
  });
  return functions;
}

}  // namespace

bool built_with_cuda() { return true; }

int require_cuda_devices() { return cuda_module().require_cuda_devices(); }

std::unique_ptr<Executor> make_cuda_executor(ExecutionOptions options) {
  return cuda_module().make_cuda_executor(std::move(options));
}

CudaMeasurements measure_cuda(const std::function<void(const std::string&)>& progress) {
  return cuda_module().measure_cuda(progress);
}

}  // namespace placesim::real
