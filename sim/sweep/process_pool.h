// Runs a function over work items in a pool of forked worker processes, handing out the next
// item to whichever worker finishes first (dynamic load balancing). Processes, not threads:
// an evaluation may run SimGrid, which allows one engine per process (and forks its own child).
// The parent receives each result as it arrives, in completion order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace placesim {

/// Worker processes kept from one batch of items to the next, with what each has built and
/// cached (a sweep's graphs, clusters and step orders: docs/performance.md): runs `work(item,
/// tag)` in a child for each item of a batch, the batch's tag (a sweep's tier) sent with the
/// item. It forks at most `workers` (at least 1), each when a batch first has work for it;
/// destroying the pool stops them. `work` runs in a child and must not throw (an exception or a
/// crash there ends the batch with std::runtime_error naming the item); `on_result` may throw.
/// A batch that fails stops every worker (results in flight are dropped with them); the next
/// batch forks anew.
class ProcessPool {
 public:
  using Work = std::function<std::string(size_t item, int tag)>;
  using OnResult = std::function<void(size_t item, const std::string& text)>;

  ProcessPool(int workers, Work work);
  ~ProcessPool();
  ProcessPool(const ProcessPool&) = delete;
  ProcessPool& operator=(const ProcessPool&) = delete;

  /// Evaluates every item of `items`, calling `on_result` in this process as each finishes.
  void run(const std::vector<size_t>& items, int tag, const OnResult& on_result);

 private:
  /// A forked worker: its process, the pipes to it and from it, and the item it holds.
  struct Worker {
    int pid = -1;
    int to_worker = -1;
    int from_worker = -1;
    bool busy = false;
    uint64_t item = 0;
  };

  /// Forks workers until there are `count`.
  void fork_workers(size_t count);
  /// Closes every worker's pipes (killing it first when `kill_them`), waits for it, forgets it.
  void stop_workers(bool kill_them);

  size_t size_;
  Work work_;
  std::vector<Worker> workers_;
};

/// One batch on a pool of its own: evaluates `work(item)` for every item in `items` on `workers` processes (at least 1) and calls
/// `on_result(item, text)` in the calling process for each, as they finish. `work` runs in a
/// child and must not throw (an exception or a crash in a child ends the pool with
/// std::runtime_error naming the item). `on_result` may throw; the workers are then stopped.
void run_in_processes(const std::vector<size_t>& items, int workers, const std::function<std::string(size_t)>& work,
                      const std::function<void(size_t, const std::string&)>& on_result);

}  // namespace placesim
