#include "sim/cluster/collective_profile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>
#include <tuple>

#include "sim/cluster/cluster.h"
#include "sim/core/csv_fields.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim {
namespace {

const std::vector<std::pair<CollectiveKind, std::string>> kKindNames = {
    {CollectiveKind::kAllReduce, "all_reduce"},         {CollectiveKind::kAllGather, "all_gather"},
    {CollectiveKind::kReduceScatter, "reduce_scatter"}, {CollectiveKind::kBroadcast, "broadcast"},
    {CollectiveKind::kReduce, "reduce"},                {CollectiveKind::kAllToAll, "alltoall"},
};

const std::vector<std::string> kColumns = {"system", "collective", "gpus", "bytes", "algbw_bytes_per_second",
                                           "busbw_bytes_per_second", "seconds", "source"};

/// The eight fields of a row; the last (source) keeps any commas it holds.
std::vector<std::string> split_row(const std::string& line) { return split_csv_fields(line, kColumns.size()); }

double parse_positive(const std::string& text, const std::string& file, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value) || value <= 0) {
    throw InputError(file, where, "expected a positive number, got \"" + text + "\"");
  }
  return value;
}

}  // namespace

const char* const kCollectiveProfileHeader =
    "system,collective,gpus,bytes,algbw_bytes_per_second,busbw_bytes_per_second,seconds,source";

std::string to_string(CollectiveKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<CollectiveKind> parse_collective_kind(const std::string& text) {
  for (const auto& [kind, name] : kKindNames) {
    if (name == text) return kind;
  }
  return std::nullopt;
}

std::vector<std::string> collective_kind_names() {
  std::vector<std::string> names;
  for (const auto& entry : kKindNames) names.push_back(entry.second);
  return names;
}

double bus_bandwidth_factor(CollectiveKind kind, int gpus) {
  const double n = gpus;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      return 1.0;
  }
  return 1.0;
}

double CollectiveCurve::busbw_bytes_per_second(double bytes) const {
  if (bytes <= points.front().bytes) return points.front().busbw_bytes_per_second;
  if (bytes >= points.back().bytes) return points.back().busbw_bytes_per_second;
  size_t upper = 1;
  while (points[upper].bytes < bytes) ++upper;
  const CollectivePoint& low = points[upper - 1];
  const CollectivePoint& high = points[upper];
  const double t = std::log(bytes / low.bytes) / std::log(high.bytes / low.bytes);
  return low.busbw_bytes_per_second + t * (high.busbw_bytes_per_second - low.busbw_bytes_per_second);
}

double CollectiveCurve::seconds_as(CollectiveKind other, double bytes) const {
  const double factor = bus_bandwidth_factor(other, gpus);
  const double at = std::max(bytes, points.front().bytes);
  return at * factor / busbw_bytes_per_second(at);
}

const CollectiveCurve* CollectiveProfile::find(CollectiveKind kind, int gpus) const {
  auto it = curves.find({kind, gpus});
  return it == curves.end() ? nullptr : &it->second;
}

CollectiveProfile read_collective_profile(const std::filesystem::path& path) {
  const std::string file = path.string();
  // A regular file within the input size limit, as every input (read_input_file).
  std::istringstream in(read_input_file(path));
  CollectiveProfile profile;
  profile.path = path;
  std::string line;
  if (std::getline(in, line) && !line.empty() && line.back() == '\r') line.pop_back();
  if (line != kCollectiveProfileHeader) {
    throw InputError(file, "line 1", "expected the header \"" + std::string(kCollectiveProfileHeader) + "\", got \"" +
                                         line + "\"");
  }
  std::set<std::tuple<CollectiveKind, int, double>> seen;
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = "line " + std::to_string(number);
    std::vector<std::string> fields = split_row(line);
    if (fields.size() != kColumns.size()) {
      throw InputError(file, where,
                       "expected " + std::to_string(kColumns.size()) + " fields, got " + std::to_string(fields.size()) +
                           ": \"" + line + "\"");
    }
    auto column = [&](size_t index) { return where + " column " + kColumns[index]; };
    if (profile.system.empty()) profile.system = fields[0];
    if (fields[0] != profile.system) {
      throw InputError(file, column(0),
                       "one system per profile: \"" + fields[0] + "\" after \"" + profile.system + "\"");
    }
    auto kind = parse_collective_kind(fields[1]);
    if (!kind) {
      std::string known;
      for (const auto& name : collective_kind_names()) known += (known.empty() ? "" : ", ") + name;
      throw InputError(file, column(1), "unknown collective \"" + fields[1] + "\"; known: " + known);
    }
    const double gpus_value = parse_positive(fields[2], file, column(2));
    if (gpus_value != std::floor(gpus_value) || gpus_value < 2 || gpus_value > 1e6) {
      throw InputError(file, column(2), "expected a whole number of GPUs from 2, got \"" + fields[2] + "\"");
    }
    const int gpus = static_cast<int>(gpus_value);
    const double bytes = parse_positive(fields[3], file, column(3));
    const double seconds = parse_positive(fields[6], file, column(6));
    if (!seen.insert({*kind, gpus, bytes}).second) {
      throw InputError(file, column(3), "size " + fields[3] + " of " + fields[1] + " over " + fields[2] +
                                            " GPUs is measured twice");
    }
    CollectiveCurve& curve = profile.curves[{*kind, gpus}];
    curve.kind = *kind;
    curve.gpus = gpus;
    curve.points.push_back({bytes, bytes * bus_bandwidth_factor(*kind, gpus) / seconds, fields[7]});
  }
  if (profile.curves.empty()) throw InputError(file, "", "no measurements after the header");
  for (auto& [key, curve] : profile.curves) {
    std::sort(curve.points.begin(), curve.points.end(),
              [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
  }
  return profile;
}

CollectiveProfile merge_collective_profiles(const std::vector<CollectiveProfile>& profiles) {
  CollectiveProfile merged;
  for (const CollectiveProfile& profile : profiles) {
    merged.system += (merged.system.empty() ? "" : " + ") + profile.system;
    if (merged.path.empty()) merged.path = profile.path;
    for (const auto& [key, curve] : profile.curves) merged.curves.emplace(key, curve);  // the first measurement wins
  }
  return merged;
}

Json write_collective_profile_json(const CollectiveProfile& profile) {
  Json curves = Json::array();
  for (const auto& [key, curve] : profile.curves) {
    Json points = Json::array();
    for (const CollectivePoint& point : curve.points) {
      points.push_back({{"bytes", point.bytes},
                        {"busbw_bytes_per_second", point.busbw_bytes_per_second},
                        {"source", point.source}});
    }
    curves.push_back({{"collective", to_string(curve.kind)}, {"gpus", curve.gpus}, {"points", points}});
  }
  return {{"system", profile.system}, {"curves", curves}};
}

CollectiveProfile read_collective_profile_json(const JsonReader& reader) {
  reader.reject_unknown_keys({"system", "curves"});
  CollectiveProfile profile;
  profile.system = reader.string_or("system", "");
  for (const JsonReader& entry : reader.at("curves").elements()) {
    entry.reject_unknown_keys({"collective", "gpus", "points"});
    CollectiveCurve curve;
    curve.kind = *parse_collective_kind(entry.choice_at("collective", collective_kind_names()));
    curve.gpus = static_cast<int>(entry.at("gpus").as_integer(2, 1000000));
    double previous = 0;
    for (const JsonReader& point : entry.at("points").elements()) {
      point.reject_unknown_keys({"bytes", "busbw_bytes_per_second", "source"});
      CollectivePoint read{point.positive_at("bytes"), point.positive_at("busbw_bytes_per_second"),
                           point.string_or("source", "")};
      if (read.bytes <= previous) point.at("bytes").fail("sizes must increase");
      previous = read.bytes;
      curve.points.push_back(std::move(read));
    }
    if (curve.points.empty()) entry.at("points").fail("a curve needs at least one point");
    if (!profile.curves.emplace(std::make_pair(curve.kind, curve.gpus), curve).second) {
      entry.fail("a second curve of " + to_string(curve.kind) + " over " + std::to_string(curve.gpus) + " GPUs");
    }
  }
  return profile;
}

std::filesystem::path collective_profile_path(const std::string& value, const std::filesystem::path& profiles_root,
                                              const std::filesystem::path& base_directory) {
  std::filesystem::path path = value;
  if (path.extension() == ".csv") return path.is_relative() ? base_directory / path : path;
  return profiles_root / "collectives" / (value + ".csv");
}

namespace {

/// Smallest sizes up to which a curve is taken to have measured the latency floor: nccl-tests'
/// default runs start at 8 B, DeepBench's at 400 KB, vTrain's at 1 MiB; a run that starts at
/// 32 MiB (xxrjun/nccl-tests-cluster's --minbytes 32M) does not show where small messages stop
/// getting cheaper.
constexpr double kLatencyFloorMeasuredBelowBytes = 1024.0 * 1024.0;

/// Whether `curve` prices a collective of `bytes`: within or above its measured sizes, or below
/// them when it starts low enough to have reached the latency floor (CollectiveCurve::seconds
/// then holds its smallest size's time). Otherwise the link-rate model prices it.
bool covers(const CollectiveCurve& curve, double bytes) {
  return !curve.points.empty() &&
         (bytes >= curve.points.front().bytes || curve.points.front().bytes <= kLatencyFloorMeasuredBelowBytes);
}

}  // namespace

std::optional<double> measured_collective_seconds(CollectiveKind kind, const std::vector<DeviceId>& group,
                                                  double bytes, const Cluster& cluster) {
  if (group.size() < 2 || bytes <= 0) return 0.0;
  if (kind != CollectiveKind::kAllReduce && kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter &&
      kind != CollectiveKind::kAllToAll) {
    return std::nullopt;
  }
  if (!cluster.collective_profile || cluster.links_rescaled()) return std::nullopt;
  const int node = cluster.device(group.front()).node;
  for (DeviceId id : group) {
    const ClusterDevice& device = cluster.device(id);
    if (device.spec.kind != DeviceKind::kGpu || device.node != node) return std::nullopt;
    if (device.shares_compute_with && *device.shares_compute_with != id) return std::nullopt;
  }
  const int gpus = static_cast<int>(group.size());
  const CollectiveCurve* own = cluster.collective_profile->find(kind, gpus);
  if (own && covers(*own, bytes)) return own->seconds(bytes);
  // An all-to-all's pairs cross the machine's links otherwise than a ring's: only its own curve.
  if (kind == CollectiveKind::kAllToAll) return std::nullopt;
  const CollectiveCurve* all_reduce = cluster.collective_profile->find(CollectiveKind::kAllReduce, gpus);
  if (!all_reduce || !covers(*all_reduce, bytes)) return std::nullopt;
  return all_reduce->seconds_as(kind, bytes);
}

}  // namespace placesim
