// Large memory pages for the heap: asks the linked allocator (mimalloc, CMakeLists.txt) to back its
// memory with 2 MiB transparent huge pages, so that a large plan faults in 512 times fewer pages.
#pragma once

namespace placesim {

/// What prefer_large_memory_pages did.
enum class LargePages {
  kEnabled,            ///< mimalloc asks the kernel for huge pages from now on (madvise)
  kLeftToEnvironment,  ///< MIMALLOC_LARGE_OS_PAGES is set: the user's choice stands
  kNoAllocatorSupport, ///< built without mimalloc (glibc's malloc, a sanitizer build): nothing done
};

/// Memory the allocator takes from the system after the call is advised as huge pages
/// (MADV_HUGEPAGE: the kernel's transparent_hugepage setting decides, and "never" makes it a
/// no-op), unless `environment` (a null-terminated `NAME=value` array) sets MIMALLOC_LARGE_OS_PAGES.
/// A program linking the `placesim_large_pages` object library runs this before anything else,
/// shared libraries' initialisers included (.preinit_array), so that the allocator's first 32 MiB
/// segment, which holds a small run's whole heap, is advised too. Costs up to one partly used
/// 2 MiB page per segment. Measured in docs/performance.md.
LargePages prefer_large_memory_pages(char** environment);

}  // namespace placesim
