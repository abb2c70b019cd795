// Measured collective curves: what NCCL-style collectives achieve on one machine, as
// nccl-tests reports it, instead of the link-rate alpha-beta model. A profile is one CSV of
// hardware_profiles/collectives/ (format in its README.md): per (collective, GPUs, message
// bytes) the achieved time and bus bandwidth, each row with its source. A cluster template
// names its machine's profile ("collective_profile"); an all-reduce over GPUs of one machine
// then takes nccl-tests' time, B x 2(n-1)/n / busbw(B, n) (nccl-tests doc/PERFORMANCE.md),
// with busbw interpolated linearly in log(bytes) between measured sizes.
// Immutable once read; safe to share between threads.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/json_reader.h"

namespace placesim {

class Cluster;
using DeviceId = std::size_t;

/// The collectives nccl-tests measures (its *_perf binaries).
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll };

std::string to_string(CollectiveKind kind);  ///< "all_reduce", "all_gather", ...
std::optional<CollectiveKind> parse_collective_kind(const std::string& text);
/// Every kind's name, for error messages.
std::vector<std::string> collective_kind_names();

/// nccl-tests' bus bandwidth factor, busbw = algbw x factor (doc/PERFORMANCE.md): all-reduce
/// 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast and reduce 1.
double bus_bandwidth_factor(CollectiveKind kind, int gpus);

struct CollectivePoint {
  double bytes = 0;  ///< nccl-tests "size": each GPU's buffer
  double busbw_bytes_per_second = 0;
  std::string source;  ///< where this point was measured (the CSV's source column)
};

/// One measured curve: a collective over `gpus` GPUs, its points in increasing size.
struct CollectiveCurve {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int gpus = 0;
  std::vector<CollectivePoint> points;

  /// Bus bandwidth at `bytes`: linear in log(bytes) between the neighbouring measured sizes;
  /// the largest size's above the range. Below the smallest size see seconds().
  double busbw_bytes_per_second(double bytes) const;
  /// Time of one collective of `bytes` per GPU: bytes x factor / busbw(bytes). Below the
  /// smallest measured size, that size's time (a collective of fewer bytes is no slower, and
  /// measured curves flatten to their latency floor there; holding busbw would send the time
  /// to 0).
  double seconds(double bytes) const { return seconds_as(kind, bytes); }
  /// The same for a collective of `other` kind moving chunks of the same size: its bus factor over
  /// this curve's busbw (nccl-tests defines busbw so that it is the hardware's for every kind).
  double seconds_as(CollectiveKind other, double bytes) const;
};

/// A profile file: one system's curves.
struct CollectiveProfile {
  std::string system;  ///< the CSV's system column
  std::filesystem::path path;
  std::map<std::pair<CollectiveKind, int>, CollectiveCurve> curves;

  /// The curve for `kind` over `gpus` GPUs, or null when none was measured.
  const CollectiveCurve* find(CollectiveKind kind, int gpus) const;
};

/// Several profiles as one (a cluster naming a list): each (collective, GPUs) curve comes from
/// the first profile that measured it; `system` joins the systems with " + ", `path` is the
/// first's. Empty input gives an empty profile.
CollectiveProfile merge_collective_profiles(const std::vector<CollectiveProfile>& profiles);

/// The header every profile CSV starts with.
extern const char* const kCollectiveProfileHeader;

/// Reads a profile CSV. Throws InputError naming the file, "line N column NAME" and the bad
/// value: wrong header, a row with the wrong number of fields, an unknown collective, a size or
/// bandwidth that is not a positive number, several systems in one file, a size measured twice.
CollectiveProfile read_collective_profile(const std::filesystem::path& path);

/// The profile as JSON, for plan files' resolved cluster (sim/cluster/cluster_json.h):
/// {"system", "curves": [{"collective", "gpus", "points": [{"bytes", "busbw_bytes_per_second", "source"}]}]}.
Json write_collective_profile_json(const CollectiveProfile& profile);
/// Reads it back; InputError with the JSON path of a bad value.
CollectiveProfile read_collective_profile_json(const JsonReader& reader);

/// Where a cluster file's "collective_profile" value points: a path (it ends in ".csv";
/// relative to `base_directory`) or the id of a bundled profile, <profiles root>/collectives/ID.csv.
std::filesystem::path collective_profile_path(const std::string& value, const std::filesystem::path& profiles_root,
                                              const std::filesystem::path& base_directory);

/// Seconds of a collective of `kind` over `group` from the cluster's measured curves, `bytes` as
/// nccl-tests sizes it (each GPU's buffer for an all-reduce, the whole gathered or reduced tensor
/// for an all-gather or reduce-scatter), or nullopt where none applies and the link-rate
/// schedules must run: no profile, a link rescaled by perturbations (the curve measured other
/// hardware), a device that is not a GPU or shares its compute, devices on different machines,
/// no curve for the group's size, a size below a curve that starts above 1 MiB (it did not
/// measure the latency floor), or another kind than these four. An all-gather or
/// reduce-scatter without a curve of its own reads the bus bandwidth of the all-reduce curve at
/// the same size (nccl-tests defines busbw so that it is the hardware's for every collective,
/// doc/PERFORMANCE.md; at equal size all three move chunks of S/N): S (N-1)/N / busbw_AR(S).
/// Groups of fewer than 2 devices or no bytes take 0.
std::optional<double> measured_collective_seconds(CollectiveKind kind, const std::vector<DeviceId>& group,
                                                  double bytes, const Cluster& cluster);

}  // namespace placesim
