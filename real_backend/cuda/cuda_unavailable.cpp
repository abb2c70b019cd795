// Stand-ins for the CUDA executor in a build without nvcc: every entry point reports, as an
// input error (exit status 2), that this placesim was built without CUDA.
#include "real_backend/cuda/cuda_executor.h"
#include "sim/core/input_error.h"

namespace placesim::real {
namespace {

[[noreturn]] void no_cuda() {
  throw InputError("--backend cuda", "",
                   "this placesim was built without CUDA (nvcc was not found when CMake configured it); "
                   "install the CUDA toolkit and reconfigure, or use --backend cpu");
}

}  // namespace

bool built_with_cuda() { return false; }
int require_cuda_devices() { no_cuda(); }
std::unique_ptr<Executor> make_cuda_executor(ExecutionOptions) { no_cuda(); }
CudaMeasurements measure_cuda(const std::function<void(const std::string&)>&) { no_cuda(); }

}  // namespace placesim::real
