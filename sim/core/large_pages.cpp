// Large memory pages for the heap (large_pages.h).
#include "sim/core/large_pages.h"

#ifdef PLACESIM_MIMALLOC
#include <mimalloc.h>

#include <cstring>
#endif

namespace placesim {

#ifdef PLACESIM_MIMALLOC
namespace {

bool sets_large_pages(char** environment) {
  constexpr char kOption[] = "MIMALLOC_LARGE_OS_PAGES=";
  for (char** entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, kOption, sizeof kOption - 1) == 0) return true;
  }
  return false;
}

// Called by the C runtime with the program's arguments and environment, before the initialisers
// of the shared libraries (libstdc++ allocates before main): only an executable's .preinit_array
// runs that early. mi_option_enable writes one of mimalloc's option slots and nothing else, so it
// is safe before mimalloc itself has started.
void prefer_large_pages_at_start(int /*argc*/, char** /*argv*/, char** environment) {
  prefer_large_memory_pages(environment);
}
__attribute__((section(".preinit_array"), used)) void (*const kPreferLargePagesAtStart)(int, char**, char**) =
    prefer_large_pages_at_start;

}  // namespace

LargePages prefer_large_memory_pages(char** environment) {
  if (sets_large_pages(environment)) return LargePages::kLeftToEnvironment;
  mi_option_enable(mi_option_large_os_pages);
  return LargePages::kEnabled;
}

#else

LargePages prefer_large_memory_pages(char** /*environment*/) { return LargePages::kNoAllocatorSupport; }

#endif

}  // namespace placesim
