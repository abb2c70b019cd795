// Every program's malloc (CMakeLists.txt, PLACESIM_MIMALLOC): in a build that links mimalloc,
// operator new and malloc both hand out mimalloc's memory, so the speed docs/performance.md
// reports is the one a user gets; a linker that dropped the library would fail here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

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

}  // namespace
}  // namespace placesim
