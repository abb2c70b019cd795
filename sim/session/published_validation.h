// `placesim validate PATH...` without a backend: every strategy of every scenario that carries a
// `published` figure is predicted and compared with it; prints one row per case, the error by
// device profile, and ends with "MAPE: N.N% over K cases". Directories are searched for *.json scenarios.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/hardware_catalog.h"

namespace placesim {

struct PublishedCase {
  std::string scenario;
  std::string strategy;
  /// "samples_per_second", "step_time_seconds", "model_tflops_per_gpu" or "scaling_efficiency"
  /// (samples/s per accelerator against the strategy it is relative to: the scaling table's, not
  /// the MAPE's)
  std::string metric;
  double published = 0;
  double predicted = 0;
  /// The accelerators it runs on, for the scaling table: a data-parallel strategy's replicas
  /// (workers), a 3D strategy's devices (tensor x pipeline x data); 0 for other strategies.
  int64_t accelerators = 0;
  /// The profile of the strategy's cluster's first accelerator (its first device when it has
  /// none), and where that profile's compute costs come from (report/cost_provenance.h).
  std::string device_profile;
  std::string cost_source;
  double relative_error() const { return (predicted - published) / published; }
};

/// Evaluates every case; throws InputError on bad input (before printing anything).
std::vector<PublishedCase> validate_published(const std::vector<std::string>& paths, const HardwareCatalog& catalog,
                                              bool progress);
/// The cases with an absolute figure (all but the scaling efficiencies): those the MAPE and the
/// error by device profile count.
std::vector<PublishedCase> absolute_cases(const std::vector<PublishedCase>& cases);
/// The table, the error by device profile (with where its costs come from) and the MAPE line; the
/// MAPE and the profiles' errors leave out the scaling efficiencies (relative figures).
std::string published_table(const std::vector<PublishedCase>& cases);
double mean_absolute_percentage_error(const std::vector<PublishedCase>& cases);
/// Scaling only: each data-parallel case against its scenario's one-replica case (samples/s),
/// published and predicted efficiency = x(N) / (N x(1)), and each published scaling efficiency
/// (against the strategy it names), the difference in points, and a line
/// "Scaling: mean |difference| P points over K rows (largest Q)". Compute errors cancel.
std::string scaling_table(const std::vector<PublishedCase>& cases);

}  // namespace placesim
