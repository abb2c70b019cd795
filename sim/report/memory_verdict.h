// Memory verdicts: a device whose peak memory exceeds its capacity, said in one line with the
// breakdown ("GPU:3 needs 41.2 GiB, has 32.0 GiB: activations 30.1 GiB, parameters ..."), so that
// a placement that does not fit fails loudly instead of giving a silent prediction.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/report/metrics.h"

namespace placesim {

/// "activations 30.1 GiB, optimizer state 12.0 GiB, parameters 2.0 GiB, gradients 2.0 GiB,
/// workspace 64.0 MiB": the parts that are not zero, largest first.
std::string describe_memory(const MemoryBreakdown& memory);

/// "GPU:3 needs 41.2 GiB, has 32.0 GiB: <describe_memory>".
std::string memory_verdict(const DeviceMetrics& device, const Cluster& cluster);
/// The same for a device named `device_name` that needs `memory.total()` of `capacity_bytes`.
std::string memory_verdict(const std::string& device_name, const MemoryBreakdown& memory, double capacity_bytes);

/// One verdict per device over its capacity, the device that lacks the most bytes first (ties in
/// device order); empty when everything fits.
std::vector<std::string> out_of_memory_verdicts(const RunMetrics& metrics, const Cluster& cluster);

/// The first `shown` verdicts (worst first, as out_of_memory_verdicts orders them) joined by "; ",
/// then "; and N more over their capacity" for the rest, so that an error on thousands of devices
/// stays one readable line.
std::string worst_verdicts(const std::vector<std::string>& verdicts, size_t shown = 3);

/// {"parameter_bytes": ..., "gradient_bytes": ..., ..., "total_bytes": ...}
Json memory_breakdown_json(const MemoryBreakdown& memory);

}  // namespace placesim
