// The steps of reading a scenario that a sweep's variations (scenario_variations.h) share with
// read_scenario: the run options, the model graph (built once per model, batch and precision
// when reused), the fetched ops, where an op's own "device" is written. Internal to the loader.
#pragma once

#include <filesystem>
#include <string>

#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {

/// "run" and "simulation" of a scenario document.
RunOptions read_run_options(const JsonReader& document);

/// The graph the "model" section gives for the run's batch and precision.
OpGraph build_model_graph(const JsonReader& model, const RunOptions& run, const std::filesystem::path& base_directory,
                          ScenarioReuse* reuse);

/// Every op "run.fetch" names is in the graph (InputError at /run/fetch/i).
void require_fetched_ops_exist(const JsonReader& document, const Scenario& scenario);

/// Errors about an op's own "device" point into the inline graph or the model file.
void locate_graph_ops(const JsonReader& model, const std::filesystem::path& base_directory, Scenario* scenario);

/// `build()` once per `key_of()` in `cache`, a copy each time after; without a cache, `build()`
/// (and no key: dumping a large inline graph costs). The entries' sizes (`size_of`) stay within
/// the cache's budget, and at most ScenarioReuse::kMaxEntries of them.
template <typename Value, typename Key, typename Build, typename SizeOf>
Value reused(ReuseCache<Value>* cache, Key key_of, Build build, SizeOf size_of) {
  if (!cache) return build();
  const std::string key = key_of();
  if (auto it = cache->entries.find(key); it != cache->entries.end()) return it->second;
  Value value = build();
  const size_t size = size_of(value);
  if (size > cache->budget) return value;
  if (cache->entries.size() >= ScenarioReuse::kMaxEntries || cache->held + size > cache->budget) {
    cache->entries.clear();
    cache->held = 0;
  }
  cache->held += size;
  return cache->entries.emplace(key, std::move(value)).first->second;
}

}  // namespace placesim
