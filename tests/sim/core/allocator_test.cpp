// Every program's malloc (CMakeLists.txt, PLACESIM_MIMALLOC): in a build that links mimalloc,
// operator new and malloc both hand out mimalloc's memory, so the speed docs/performance.md
// reports is the one a user gets; a linker that dropped the library would fail here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "sim/core/large_pages.h"

#ifdef PLACESIM_MIMALLOC
#include <mimalloc.h>
#endif

namespace placesim {
namespace {

TEST(Allocator, NewAndMallocHandOutTheLinkedAllocatorsMemory) {
#ifdef PLACESIM_MIMALLOC
  const auto values = std::make_unique<std::vector<double>>(1000, 1.0);
  EXPECT_TRUE(mi_is_in_heap_region(values.get()));
  EXPECT_TRUE(mi_is_in_heap_region(values->data()));
  void* raw = std::malloc(4096);
  ASSERT_NE(raw, nullptr);
  EXPECT_TRUE(mi_is_in_heap_region(raw));
  std::free(raw);
#else
  GTEST_SKIP() << "built with glibc's malloc (no libmimalloc-dev, -DPLACESIM_MIMALLOC=OFF or a sanitizer build)";
#endif
}

// A program linking placesim_large_pages asks for huge pages before anything runs (large_pages.h):
// this test program links it as the placesim program does.
TEST(Allocator, LargePagesAreAskedForBeforeMain) {
#ifdef PLACESIM_MIMALLOC
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) GTEST_SKIP() << "MIMALLOC_LARGE_OS_PAGES is set here";
  EXPECT_TRUE(mi_option_is_enabled(mi_option_large_os_pages));
  // Memory taken from the system since still works as memory (whether the kernel backs it with
  // huge pages is /sys/kernel/mm/transparent_hugepage's to decide).
  std::vector<double> values(4u << 20, 1.0);  // 32 MiB, more than one allocator segment
  EXPECT_EQ(values.back(), 1.0);
  EXPECT_TRUE(mi_is_in_heap_region(values.data()));
#else
  GTEST_SKIP() << "built with glibc's malloc (no libmimalloc-dev, -DPLACESIM_MIMALLOC=OFF or a sanitizer build)";
#endif
}

// A user's MIMALLOC_LARGE_OS_PAGES, either way, stands; a name that only starts alike does not count.
TEST(Allocator, TheEnvironmentDecidesLargePagesWhenItNamesThem) {
  char path[] = "PATH=/usr/bin";
  char alike[] = "MIMALLOC_LARGE_OS_PAGES_X=0";
  char off[] = "MIMALLOC_LARGE_OS_PAGES=0";
  char* silent[] = {path, alike, nullptr};
  char* naming[] = {path, off, nullptr};
#ifdef PLACESIM_MIMALLOC
  const bool at_start = mi_option_is_enabled(mi_option_large_os_pages);
  mi_option_disable(mi_option_large_os_pages);
  EXPECT_EQ(prefer_large_memory_pages(naming), LargePages::kLeftToEnvironment);
  EXPECT_FALSE(mi_option_is_enabled(mi_option_large_os_pages));
  EXPECT_EQ(prefer_large_memory_pages(silent), LargePages::kEnabled);
  EXPECT_TRUE(mi_option_is_enabled(mi_option_large_os_pages));
  EXPECT_EQ(prefer_large_memory_pages(nullptr), LargePages::kEnabled);
  mi_option_set_enabled(mi_option_large_os_pages, at_start);
#else
  EXPECT_EQ(prefer_large_memory_pages(naming), LargePages::kNoAllocatorSupport);
  EXPECT_EQ(prefer_large_memory_pages(silent), LargePages::kNoAllocatorSupport);
#endif
}

}  // namespace
}  // namespace placesim
