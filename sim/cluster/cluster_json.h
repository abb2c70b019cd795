// The resolved cluster as JSON: every device with its full profile, every switch and link with
// its numbers. Plan files embed it so that `placesim simulate plan.json` needs nothing else.
#pragma once

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"

namespace placesim {

Json write_cluster_json(const Cluster& cluster);
/// Throws InputError with the JSON path of any problem.
Cluster read_cluster_json(const JsonReader& cluster);
Json write_device_profile(const DeviceSpec& spec);

}  // namespace placesim
