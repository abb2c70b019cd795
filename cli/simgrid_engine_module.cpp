// make_simgrid_engine() for the placesim program: the SimGrid engine is a module
// (libplacesim_simgrid.so, sim/CMakeLists.txt) opened when placesim first simulates. Linked in,
// libsimgrid and the ns-3 libraries it needs cost every invocation ~25 ms of CPU and ~30 MB
// resident before main, `--version` and `check` included (start-up, docs/performance.md). Being
// a source of the program, this definition keeps the linker from pulling placesim_engine's.
#include <mutex>
#include <stdexcept>
#include <string>

#include "sim/core/module_loader.h"
#include "sim/engine/simgrid_engine.h"

namespace placesim {

std::unique_ptr<PlanEngine> make_simgrid_engine() {
  using Create = PlanEngine* (*)();
  static Create create = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string error;
    void* module = open_placesim_module("libplacesim_simgrid.so", "PLACESIM_SIMGRID_MODULE",
                                        PLACESIM_SIMGRID_MODULE_PATH, &error);
    create = reinterpret_cast<Create>(module_symbol(module, "placesim_simgrid_engine_create"));
    if (!create) throw std::runtime_error(module ? "libplacesim_simgrid.so has no placesim_simgrid_engine_create" : error);
  });
  return std::unique_ptr<PlanEngine>(create());
}

}  // namespace placesim
