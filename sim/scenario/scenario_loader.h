// Loads a scenario file into a typed Scenario, resolving the model (zoo, file or inline graph)
// and the cluster (template, file or inline) and validating every field with its JSON path.
#pragma once

#include <filesystem>
#include <string>

#include "sim/cluster/hardware_catalog.h"
#include "sim/core/reuse_cache.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// What reading many variations of one document (a sweep's configurations, in one process,
/// with one catalog and base directory) may build once: the model graph per (model section,
/// batch, precision) and the cluster per cluster section, before perturbations. A reused entry
/// is a copy of what reading it again would build. Not thread-safe. Each cache keeps at most
/// kMaxEntries entries and its budget of ops (graphs: 1,000,000) or devices (clusters: 65,536)
/// in all (sim/core/reuse_cache.h: a sweep over 64 sizes of a 100,000-node cluster must not
/// hold them all).
struct ScenarioReuse {
  static constexpr size_t kMaxEntries = 64;
  ReuseCache<OpGraph> graphs{{}, 0, 1000000, kMaxEntries};
  ReuseCache<Cluster> clusters{{}, 0, 65536, kMaxEntries};
};

/// Throws InputError naming the file and JSON path of the first problem found.
Scenario load_scenario(const std::filesystem::path& path, const HardwareCatalog& catalog);
/// `reuse` (may be null): graphs and clusters built by earlier calls on variations of the
/// same document.
Scenario read_scenario(const JsonReader& document, const HardwareCatalog& catalog,
                       const std::filesystem::path& base_directory, ScenarioReuse* reuse = nullptr);

/// Where a scenario's `outputs` entry (`value`, at `json_path`) writes: relative to the scenario
/// file's directory. Unless `allow_outside`, a path that leaves that directory (absolute, with
/// "..", or through a linked directory) is refused with an InputError: a scenario from elsewhere
/// must not overwrite the user's files. "" stays "".
std::string scenario_output_path(const std::string& value, const std::filesystem::path& scenario_file,
                                 const std::string& json_path, bool allow_outside);

}  // namespace placesim
