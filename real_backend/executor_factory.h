// The one place that picks an executor for a backend: the CPU executor (real_backend/cpu) or the
// CUDA executor (real_backend/cuda), both behind the Executor interface of
// real_backend/runtime/executor.h.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "real_backend/runtime/executor.h"

namespace placesim::real {

enum class Backend { kCpu, kCuda };
std::optional<Backend> parse_backend(const std::string& text);
std::string to_string(Backend backend);

/// The executor for a backend. InputError (exit status 2 in the CLI) when this machine cannot
/// provide it: no CUDA GPU, a driver too old, or a build without CUDA.
std::unique_ptr<Executor> make_executor(Backend backend, ExecutionOptions options);

}  // namespace placesim::real
