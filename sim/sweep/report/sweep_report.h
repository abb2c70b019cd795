// Everything the sweep's report writers read: the spec, one outcome per configuration (Pareto
// and recommendation marked) and the recommendation. Reports read results; they never evaluate.
#pragma once

#include <string>
#include <vector>

#include "sim/sweep/recommendation.h"
#include "sim/sweep/sweep_outcome.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {

struct SweepReport {
  std::string scenario;  ///< scenario name
  const SweepSpec* spec = nullptr;
  std::vector<SweepOutcome> outcomes;  ///< in index order
  Recommendation recommendation;
};

/// The configurations that do not fit or cannot be built that summary.md and report.html list
/// (a search's may be thousands); results.csv has every one.
inline constexpr size_t kInfeasibleRowsListed = 100;

/// Global batch of a configuration: per-replica batch x devices for data parallelism, the
/// step's batch for a pipeline (one replica).
int64_t global_batch(const SweepSpec& spec, const SweepConfiguration& configuration);

/// results.csv: a header and one row per configuration, in index order; every metric.
std::string sweep_csv(const SweepReport& report);
/// summary.md: the recommendation, the Pareto frontier, the table of the best configurations,
/// the ones that do not fit and why (the first kInfeasibleRowsListed), and the differences
/// between tiers (analytical vs simulated, search vs analytical).
std::string sweep_summary_markdown(const SweepReport& report);
/// report.html: one self-contained page (inline SVG, no script, no external style).
std::string sweep_html(const SweepReport& report);

}  // namespace placesim
