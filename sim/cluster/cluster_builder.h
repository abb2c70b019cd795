// Builds a Cluster from its JSON description: a template from hardware_profiles/clusters, a
// cluster file, or an inline node, repeated over `nodes` machines joined by a fabric
// (single switch or two-level fat tree). See docs/scenario-format.md, "cluster".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "sim/cluster/cluster.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"

namespace placesim {

/// Clusters of more devices are refused before they are built (docs/reliability.md, "Limits").
inline constexpr int64_t kMaxClusterDevices = 1000000;
/// At most this many nodes (machines) per cluster.
inline constexpr int64_t kMaxClusterNodes = 100000;

/// Builds the cluster a scenario's "cluster" object describes. Relative "file" paths resolve
/// against `base_directory`. Throws InputError with the JSON path of any problem.
Cluster build_cluster(const JsonReader& description, const HardwareCatalog& catalog,
                      const std::filesystem::path& base_directory);

/// What {"template": template_id, "nodes": nodes, "fabric": {"link": fabric_link}} builds ("" =
/// the template's fabric): a sweep configuration's cluster, without a description to read.
Cluster build_template_cluster(const std::string& template_id, int64_t nodes, const std::string& fabric_link,
                               const HardwareCatalog& catalog);

/// Loads and builds a standalone cluster file (the template format).
Cluster load_cluster_file(const std::filesystem::path& path, const HardwareCatalog& catalog);

}  // namespace placesim
