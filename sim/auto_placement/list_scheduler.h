// List scheduling with a memory ledger: the engine of m-ETF and m-SCT. Repeatedly takes, among
// the ops whose inputs are all placed, the one that can start earliest (data arrival over the
// cluster's routes vs. the device's last finish; no insertion into idle gaps), as in Hwang et
// al.'s Earliest Task First (SIAM J. Comput. 1989), each op on the device with room where it
// would finish earliest. On identical devices that device is also where it starts earliest, so
// this is ETF exactly; on mixed CPU/GPU clusters it keeps a slow idle CPU from winning an op
// merely by being free first. Ties go to the op with the larger bottom level, then the earlier op
// in topological order, then the earlier device.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "sim/auto_placement/auto_placer.h"
#include "sim/auto_placement/memory_ledger.h"

namespace placesim {

/// The device an op must go to when the algorithm wants it there (m-SCT: its favourite parent's),
/// or nullopt; ignored when that device has no room for it.
using PreferredDevice = std::function<std::optional<DeviceId>(OpId, const MemoryLedger&)>;

AutoPlacement list_schedule(const PlacementProblem& problem, const std::string& algorithm,
                            const PreferredDevice& preferred = nullptr);

}  // namespace placesim
