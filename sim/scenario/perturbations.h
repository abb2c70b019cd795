// A scenario's "perturbations" (slow devices, jitter, degraded links), read once and applied to
// any cluster built for it: the scenario's, a strategy's own, or each sweep configuration's.
// Part of the scenario loader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/spec/run_options.h"

namespace placesim {

struct Perturbations {
  struct DeviceSpeed {
    DeviceName device;  ///< a partial name slows every device it matches
    std::string text;   ///< as written
    double factor = 1;
    std::string json_path;  ///< of "device"
  };
  struct LinkBandwidth {
    std::string match;  ///< a glob over link names and link types
    double factor = 1;
    std::string json_path;  ///< of "match"
  };
  std::string file;
  std::vector<DeviceSpeed> device_speeds;
  std::optional<double> jitter_sigma;  ///< log-normal
  std::vector<LinkBandwidth> links;
};

Perturbations read_perturbations(const JsonReader& perturbations);

/// Device speed and link bandwidth factors to the cluster, jitter to the run options; an
/// InputError at the entry's path when it matches no device or link of this cluster.
void apply_perturbations(const Perturbations& perturbations, Cluster* cluster, RunOptions* run);

}  // namespace placesim
