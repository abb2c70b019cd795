// Loads a scenario file into a typed Scenario, resolving the model (zoo, file or inline graph)
// and the cluster (template, file or inline) and validating every field with its JSON path.
#pragma once

#include <filesystem>

#include "sim/cluster/hardware_catalog.h"
#include "sim/scenario/scenario.h"

namespace placesim {

/// Throws InputError naming the file and JSON path of the first problem found.
Scenario load_scenario(const std::filesystem::path& path, const HardwareCatalog& catalog);
Scenario read_scenario(const JsonReader& document, const HardwareCatalog& catalog,
                       const std::filesystem::path& base_directory);

}  // namespace placesim
