// A configuration's standing in the sweep: its evaluated rows (search, analytical, simulated),
// and what follows from them with the prices and constraints: cost per hour, time and cost to
// train, tokens/s, scaling efficiency, whether it meets the target and the budget.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sim/sweep/sweep_row.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {

struct SweepOutcome {
  SweepConfiguration configuration;
  std::optional<SweepRow> analytical;
  std::optional<SweepRow> simulated;
  std::optional<SweepRow> searched;  ///< the search tier's screen (sim/session/sweep_screen.h)
  double usd_per_hour = 0;
  double time_to_train_seconds = 0;  ///< spec.train_samples / throughput (infinite when not ok)
  double usd_to_train = 0;
  double tokens_per_second = 0;      ///< 0 without tokens per sample
  double scaling_efficiency = 0;     ///< throughput / (replicas x one replica's throughput); 0 = no baseline
  double mfu = 0;                    ///< model FLOPs per second / the devices' peak (docs/llm-planning.md)
  double hfu = 0;                    ///< the same with recomputed forwards
  double model_flops_per_second_per_device = 0;
  bool meets_target = true;          ///< no target counts as met
  bool within_budget = true;
  bool pareto = false;               ///< on the cost-to-train vs time-to-train frontier
  bool recommended = false;

  bool evaluated() const { return analytical || simulated || searched; }
  /// The most faithful row: simulated, else analytical, else the search's screen.
  const SweepRow& row() const { return simulated ? *simulated : analytical ? *analytical : *searched; }
  bool fits() const { return evaluated() && row().status == RowStatus::kOk; }
  bool acceptable() const { return fits() && meets_target && within_budget; }
  /// (analytical - simulated) / simulated step time, in percent, when both exist and are ok.
  std::optional<double> analytical_error_percent() const;
  /// (search - analytical) / analytical step time, in percent, when both exist and are ok.
  std::optional<double> search_error_percent() const;
};

/// One outcome per configuration, in index order, with costs and constraints filled in
/// (pareto and recommended are left false: see pareto_frontier.h and recommendation.h).
std::vector<SweepOutcome> assess(const SweepSpec& spec, const std::map<std::pair<size_t, Tier>, SweepRow>& rows);
/// The outcome of one configuration, as assess gives it: after a configuration's rows change,
/// its outcome alone can be assessed again.
SweepOutcome assess_configuration(const SweepSpec& spec, const std::map<std::pair<size_t, Tier>, SweepRow>& rows,
                                  const SweepConfiguration& configuration);

}  // namespace placesim
