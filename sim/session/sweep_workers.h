// Where a sweep's work items run (run_sweep, sweep_run.h): the session hands items out and takes
// their rows back as text, and does not know whether they run in forked processes on this host
// (LocalProcesses) or on the ranks of `mpirun` across hosts (the command's, cli/sweep_ranks.h).
// Like ninja's CommandRunner: one small interface, the real runners and a test's behind it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/sweep/process_pool.h"

namespace placesim {

class SweepWorkers {
 public:
  /// One item's rows as text (row_wire.h) on a tier (Tier as an int); runs wherever the workers
  /// are, and must not throw. A runner is made with it (a sweep's: sweep_work_item_text).
  using Work = std::function<std::string(size_t item, int tier)>;
  /// Called in this process for each item as its rows arrive, in completion order; may throw.
  using OnResult = std::function<void(size_t item, const std::string& text)>;

  virtual ~SweepWorkers() = default;

  /// Evaluates its work for every item of `items`, all on `tier` (a runner on other hosts sends
  /// it with the item), calling `on_result` as each finishes.
  virtual void run(const std::vector<size_t>& items, int tier, const OnResult& on_result) = 0;

  /// How the sweep's progress line names them: "2 processes", "4 MPI ranks".
  virtual std::string description() const = 0;

  /// The sweep has no more work: workers on other hosts may stop.
  virtual void finish() {}
};

/// `jobs` forked processes of this host, kept from one call of run to the next (the screen's
/// workers evaluate the best configurations with what they built: sim/sweep/process_pool.h).
class LocalProcesses final : public SweepWorkers {
 public:
  LocalProcesses(int jobs, Work work) : jobs_(jobs), work_(std::move(work)) {}
  void run(const std::vector<size_t>& items, int tier, const OnResult& on_result) override;
  std::string description() const override;
  void finish() override;

 private:
  int jobs_;
  Work work_;
  std::optional<ProcessPool> pool_;  ///< from the first run to finish
};

}  // namespace placesim
