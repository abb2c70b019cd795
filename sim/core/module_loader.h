// Opening placesim's own modules: parts of placesim built as shared objects that the program
// opens only when a command needs them (the SimGrid engine, the CUDA executor), so that the
// libraries they pull in are not loaded by every invocation (start-up, docs/performance.md).
// A module resolves the rest of placesim in the program that opens it (CMake ENABLE_EXPORTS).
#pragma once

#include <string>

namespace placesim {

/// Opens `file_name` (e.g. "libplacesim_simgrid.so") from, in order: the path in environment
/// variable `environment_variable` if set, the program's directory, `<program dir>/../lib/placesim`
/// (installed), and `build_path` (where this build made it). Returns the dlopen handle, or
/// nullptr with `error` saying what was tried and why it failed. Thread-safe.
void* open_placesim_module(const std::string& file_name, const char* environment_variable,
                           const std::string& build_path, std::string* error);

/// The address of `symbol` in a module open_placesim_module returned, or nullptr.
void* module_symbol(void* module, const char* symbol);

}  // namespace placesim
