// Runs a function over work items in a pool of forked worker processes, handing out the next
// item to whichever worker finishes first (dynamic load balancing). Processes, not threads:
// an evaluation may run SimGrid, which allows one engine per process (and forks its own child).
// The parent receives each result as it arrives, in completion order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace placesim {

/// Evaluates `work(item)` for every item in `items` on `workers` processes (at least 1) and calls
/// `on_result(item, text)` in the calling process for each, as they finish. `work` runs in a
/// child and must not throw (an exception or a crash in a child ends the pool with
/// std::runtime_error naming the item). `on_result` may throw; the workers are then stopped.
void run_in_processes(const std::vector<size_t>& items, int workers, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& on_result);

}  // namespace placesim
