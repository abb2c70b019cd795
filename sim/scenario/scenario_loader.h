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

/// Where a scenario's `outputs` entry (`value`, at `json_path`) writes: relative to the scenario
/// file's directory. Unless `allow_outside`, a path that leaves that directory (absolute, with
/// "..", or through a linked directory) is refused with an InputError: a scenario from elsewhere
/// must not overwrite the user's files. "" stays "".
std::string scenario_output_path(const std::string& value, const std::filesystem::path& scenario_file,
                                 const std::string& json_path, bool allow_outside);

}  // namespace placesim
