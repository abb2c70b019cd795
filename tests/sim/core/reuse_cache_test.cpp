// ReuseCache (sim/core/reuse_cache.h): a value built once per key and handed out in place or as
// a copy, within the cache's entries and budget.
#include "sim/core/reuse_cache.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace placesim {
namespace {

using Values = std::vector<int>;

struct Counted {
  int builds = 0;
  size_t size = 3;
  Values build() {
    ++builds;
    return Values(size, builds);
  }
};

TEST(ReuseCache, InPlaceHandsOutTheCachedValueItselfAndBuildsItOnce) {
  ReuseCache<Values> cache{{}, 0, 100, 4};
  Counted counted;
  std::optional<Values> uncached;
  auto get = [&](const std::string& key) -> const Values& {
    return reused_in_place(&cache, [&] { return key; }, [&] { return counted.build(); },
                           [](const Values& values) { return values.size(); }, &uncached);
  };
  const Values& first = get("a");
  const Values& again = get("a");
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(&first, &cache.entries.at("a"));
  EXPECT_EQ(counted.builds, 1);
  EXPECT_FALSE(uncached.has_value());
  EXPECT_EQ(cache.held, 3u);
}

TEST(ReuseCache, WithoutACacheOrAboveItsBudgetTheValueIsBuiltIntoTheCallersSlot) {
  Counted counted;
  std::optional<Values> uncached;
  const Values& alone = reused_in_place<Values>(nullptr, [] { return std::string("a"); }, [&] { return counted.build(); },
                                                [](const Values& values) { return values.size(); }, &uncached);
  ASSERT_TRUE(uncached.has_value());
  EXPECT_EQ(&alone, &*uncached);
  ReuseCache<Values> small{{}, 0, 2, 4};  // a budget of 2 units: a 3-element value is not kept
  std::optional<Values> too_large;
  const Values& built = reused_in_place(&small, [] { return std::string("a"); }, [&] { return counted.build(); },
                                        [](const Values& values) { return values.size(); }, &too_large);
  EXPECT_EQ(&built, &*too_large);
  EXPECT_TRUE(small.entries.empty());
  EXPECT_EQ(counted.builds, 2);
}

TEST(ReuseCache, ACopyIsTheCachedValueAndItsCallerMayChangeIt) {
  ReuseCache<Values> cache{{}, 0, 100, 4};
  Counted counted;
  auto get = [&] {
    return reused(&cache, [] { return std::string("a"); }, [&] { return counted.build(); },
                  [](const Values& values) { return values.size(); });
  };
  Values copy = get();
  copy[0] = 42;
  EXPECT_EQ(get(), Values(3, 1));
  EXPECT_EQ(counted.builds, 1);
}

}  // namespace
}  // namespace placesim
