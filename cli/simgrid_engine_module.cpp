// make_simgrid_engine() for the placesim program: the SimGrid engine is a module
// (libplacesim_simgrid.so, sim/CMakeLists.txt) opened when placesim first simulates. Linked in,
// libsimgrid and the ns-3 libraries it needs cost every invocation ~25 ms of CPU and ~30 MB
// resident before main, `--version` and `check` included (start-up, docs/performance.md). Being
// a source of the program, this definition keeps the linker from pulling placesim_engine's.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/module_loader.h"
#include "sim/engine/simgrid_engine.h"

namespace placesim {
namespace {

// Opens the ns-3 stubs (scripts/make_ns3_stubs.sh, cli/CMakeLists.txt) so that SimGrid, opened
// next, takes them for the ns-3 libraries it needs: about 22 ms of CPU and 20 MB less per
// simulating command. All or none: a stub beside real ns-3 libraries would break them, so if
// one is missing, those opened are closed again and SimGrid loads ns-3 as before.
void open_ns3_stubs() {
#ifdef PLACESIM_NS3_STUBS
  const char* real = std::getenv("PLACESIM_SIMGRID_NS3");
  if (real && std::string(real) == "1") return;
  std::vector<void*> opened;
  std::istringstream sonames(PLACESIM_NS3_STUBS);
  for (std::string soname; std::getline(sonames, soname, ':');) {
    std::string error;
    // Found beside the program (ns3-stubs/), installed (lib/placesim/ns3-stubs/) or in this build;
    // no environment variable names them.
    void* stub = open_placesim_module("ns3-stubs/" + soname, "", PLACESIM_NS3_STUB_BUILD_DIR "/" + soname, &error);
    if (!stub) {
      for (void* handle : opened) ::dlclose(handle);
      return;
    }
    opened.push_back(stub);
  }
#endif
}

}  // namespace

std::unique_ptr<PlanEngine> make_simgrid_engine() {
  using Create = PlanEngine* (*)();
  static Create create = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    open_ns3_stubs();
    std::string error;
    void* module = open_placesim_module("libplacesim_simgrid.so", "PLACESIM_SIMGRID_MODULE",
                                        PLACESIM_SIMGRID_MODULE_PATH, &error);
    create = reinterpret_cast<Create>(module_symbol(module, "placesim_simgrid_engine_create"));
    if (!create) throw std::runtime_error(module ? "libplacesim_simgrid.so has no placesim_simgrid_engine_create" : error);
  });
  return std::unique_ptr<PlanEngine>(create());
}

}  // namespace placesim
