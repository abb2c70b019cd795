// ReuseCache: values built once per key and handed out again, within a budget (a sweep's
// graphs, clusters and step orders per process). Not thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

namespace placesim {

/// At most `max_entries` entries and `budget` units in all (what `size_of` counts: ops, devices,
/// slots): an entry that would go over starts the cache over, and one larger than the budget
/// alone is not kept.
template <typename Value>
struct ReuseCache {
  std::map<std::string, Value> entries;
  size_t held = 0;    ///< units in `entries`
  size_t budget = 0;  ///< at most this many in all
  size_t max_entries = 64;
};

/// `build()` once per `key_of()` in `cache`, handed out in place: the cached value (valid until
/// the cache next changes), or, without a cache or for a value larger than its budget, the one
/// built into `*uncached`.
template <typename Value, typename Key, typename Build, typename SizeOf>
const Value& reused_in_place(ReuseCache<Value>* cache, Key key_of, Build build, SizeOf size_of,
                             std::optional<Value>* uncached) {
  if (!cache) return uncached->emplace(build());
  const std::string key = key_of();
  if (auto it = cache->entries.find(key); it != cache->entries.end()) return it->second;
  Value value = build();
  const size_t size = size_of(value);
  if (size > cache->budget) return uncached->emplace(std::move(value));
  if (cache->entries.size() >= cache->max_entries || cache->held + size > cache->budget) {
    cache->entries.clear();
    cache->held = 0;
  }
  cache->held += size;
  return cache->entries.emplace(key, std::move(value)).first->second;
}

/// `build()` once per `key_of()` in `cache`, a copy each time after; without a cache, `build()`
/// (and no key: a key may cost, as dumping a large inline graph does).
template <typename Value, typename Key, typename Build, typename SizeOf>
Value reused(ReuseCache<Value>* cache, Key key_of, Build build, SizeOf size_of) {
  std::optional<Value> uncached;
  const Value& value = reused_in_place(cache, key_of, build, size_of, &uncached);
  if (uncached) return std::move(*uncached);
  return value;
}

}  // namespace placesim
