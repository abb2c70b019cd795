#include "real_backend/executor_factory.h"

#include <stdexcept>

#include "real_backend/cpu/cpu_executor.h"
#include "real_backend/cuda/cuda_executor.h"

namespace placesim::real {

std::optional<Backend> parse_backend(const std::string& text) {
  if (text == "cpu") return Backend::kCpu;
  if (text == "cuda") return Backend::kCuda;
  return std::nullopt;
}

std::string to_string(Backend backend) { return backend == Backend::kCpu ? "cpu" : "cuda"; }

std::unique_ptr<Executor> make_executor(Backend backend, ExecutionOptions options) {
  if (options.timed_runs < 1 || options.warmup_runs < 0) {
    throw std::invalid_argument("make_executor: need at least one timed run");
  }
  if (backend == Backend::kCpu) return make_cpu_executor(std::move(options));
  return make_cuda_executor(std::move(options));
}

}  // namespace placesim::real
