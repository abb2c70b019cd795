// `placesim validate --collectives`: the communication model checked on measured parts. Every
// measured nccl-tests curve a bundled cluster template names (hardware_profiles/collectives/) is
// compared, point by point, with what placesim predicts for the same collective over the
// template's first GPUs when no curve is used: NCCL's choice of ring or tree and of protocol, its
// latencies, and the algorithm's bandwidth term on the links (nccl_cost_model.h), as a scenario
// with `"collective_profile": "none"` under an NCCL framework runs it. The curves are what the
// simulator otherwise replays, so this is the error a machine without a measured curve inherits.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/cluster/collective_profile.h"
#include "sim/cluster/hardware_catalog.h"

namespace placesim {

/// One measured point against its prediction.
struct CollectiveCheck {
  /// The bundled template whose profile holds the curve, or the name of the checks.json entry.
  std::string cluster;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int gpus = 0;
  double bytes = 0;  ///< nccl-tests "size": each GPU's buffer
  double measured_seconds = 0;
  double predicted_seconds = 0;
  std::string algorithm;  ///< what NCCL's tuner picks ("ring", "tree", ...)
  std::string protocol;   ///< NCCL's protocol ("LL", "LL128", "Simple"); empty where NCCL's model does not apply
  std::string source;     ///< the measured point's source (the CSV's source column)
  double relative_error() const { return (predicted_seconds - measured_seconds) / measured_seconds; }
};

/// Every point of every curve the catalog's cluster templates name (each curve once: the first
/// template, in id order, that names its file), predicted over the template's first `gpus` GPUs
/// in device order; curves over more GPUs than a template's first machine holds are skipped.
std::vector<CollectiveCheck> check_collective_curves(const HardwareCatalog& catalog);

/// Reads a checks file (hardware_profiles/collectives/checks.json's format: "checks", each with
/// "name", "profile", "cluster" (a scenario's cluster object), optional "nccl_algo" ("Ring" or
/// "Tree") and "why") and builds every entry's cluster with its profile and without; the number of
/// entries. InputError names the file, the JSON path and the bad value (`placesim check`).
size_t check_collective_checks_file(const std::filesystem::path& path, const HardwareCatalog& catalog);

/// The summary, one line per (template, collective, GPUs): mean |error| over the curve's points
/// in each size band (below 64 KiB, 64 KiB..1 MiB, 1..16 MiB, 16..256 MiB, 256 MiB and up) and in
/// all, then the mean and median |error| over every point and over the points of 1 MiB and more;
/// with `every_point`, first a row per point (measured, predicted, algorithm, protocol, error).
std::string collective_check_table(const std::vector<CollectiveCheck>& checks, bool every_point);

}  // namespace placesim
