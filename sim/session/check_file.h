// `placesim check FILE`: recognises what a JSON file is (scenario, model graph, device profile,
// link table, cluster template, plan) and validates it fully, reporting the first error with
// its JSON path.
#pragma once

#include <filesystem>
#include <string>

#include "sim/cluster/hardware_catalog.h"

namespace placesim {

/// Validates the file and returns a one-line summary of what it holds; InputError otherwise.
/// `kind` is "auto" or one of: scenario, model, device, links, cluster, plan, prices, collective-checks. A scenario
/// with a strategy that does not fit in memory is an InputError, as `run` refuses it, unless
/// `allow_oom` (as `run --allow-oom`): then the summary names the worst verdict.
std::string check_file(const std::filesystem::path& path, const std::string& kind, const HardwareCatalog& catalog,
                       bool allow_oom = false);

}  // namespace placesim
