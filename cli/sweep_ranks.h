// A sweep spread over the ranks of `mpirun -np N placesim sweep` (docs/capacity-planning.md):
// rank 0 keeps the result store and the outputs and hands configurations out one at a time to
// whichever rank is free (dynamic load balancing), evaluating some itself while it waits; the
// other ranks only evaluate what they are sent, until rank 0 tells them to stop.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "real_backend/hosts/host_group.h"

namespace placesim {

/// Rank 0: evaluates every item (`work(item)`, a row as text) on the group, calling `on_result`
/// on rank 0 as rows arrive, in completion order.
void evaluate_over_ranks(real::HostGroup& group, const std::vector<size_t>& items, int tier,
                         const std::function<std::string(size_t)>& work,
                         const std::function<void(size_t, const std::string&)>& on_result);

/// Rank 0, at the end: every other rank returns from serve_sweep_items.
void stop_sweep_ranks(real::HostGroup& group);

/// Ranks 1..N-1: evaluate `work(item, tier)` for each item rank 0 sends, until told to stop.
void serve_sweep_items(real::HostGroup& group, const std::function<std::string(size_t, int)>& work);

}  // namespace placesim
