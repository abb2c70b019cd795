#include "sim/session/collective_validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "sim/cluster/cluster_builder.h"
#include "sim/cluster/transport.h"
#include "sim/core/json_reader.h"
#include "sim/core/quantile.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/nccl_cost_model.h"
#include "sim/planner/framework_transports.h"

namespace placesim {
namespace {

/// A cluster a measured curve is checked on: a bundled template (its own curves), or an entry
/// of hardware_profiles/collectives/checks.json (a profile measured on several machines, with the
/// cluster it ran on).
struct CheckedCluster {
  std::string label;
  Json description;  ///< a scenario's cluster object
  std::string where;
  /// The algorithm the run forced (NCCL_ALGO=Ring or Tree); none: NCCL's own choice.
  std::optional<CollectiveAlgorithm> forced;
};

/// The entries of a checks file (hardware_profiles/collectives/checks.json's format).
std::vector<CheckedCluster> read_checks_file(const std::filesystem::path& path) {
  std::vector<CheckedCluster> clusters;
  const Json checks = parse_json_file(path);
  const JsonReader root(checks, path.string());
  root.expect_object();
  root.reject_unknown_keys({"description", "checks"});
  for (const JsonReader& entry : root.at("checks").elements()) {
    entry.reject_unknown_keys({"name", "profile", "cluster", "nccl_algo", "why"});
    entry.at("cluster").expect_object();
    entry.string_at("why");
    Json description = entry.at("cluster").value();
    description["collective_profile"] = entry.string_at("profile");
    CheckedCluster checked{entry.string_at("name"), description, path.string(), std::nullopt};
    if (entry.has("nccl_algo")) {
      // NCCL's names: its ring is placesim's ring (across machines its rings through every GPU).
      checked.forced = entry.choice_at("nccl_algo", {"Ring", "Tree"}) == "Ring" ? CollectiveAlgorithm::kRing
                                                                               : CollectiveAlgorithm::kDoubleBinaryTree;
    }
    clusters.push_back(std::move(checked));
  }
  return clusters;
}

std::vector<CheckedCluster> checked_clusters(const HardwareCatalog& catalog) {
  std::vector<CheckedCluster> clusters;
  for (const std::string& id : catalog.cluster_template_ids()) {
    Json description = Json::object();
    description["template"] = id;
    clusters.push_back({id, description, "template " + id, std::nullopt});
  }
  const std::filesystem::path checks_path = catalog.root() / "collectives" / "checks.json";
  std::error_code error;
  if (!std::filesystem::exists(checks_path, error)) return clusters;
  for (CheckedCluster& checked : read_checks_file(checks_path)) clusters.push_back(std::move(checked));
  return clusters;
}

Cluster build_checked_cluster(const CheckedCluster& checked, const HardwareCatalog& catalog, bool measured_curves) {
  Json description = checked.description;
  if (!measured_curves) description["collective_profile"] = "none";
  return build_cluster(JsonReader(description, checked.where), catalog, catalog.root() / "collectives");
}

/// The cluster's GPUs, machine by machine, each machine's in device order (nccl-tests' ranks
/// with `-npernode`).
std::vector<DeviceId> gpus_by_machine(const Cluster& cluster) {
  std::vector<DeviceId> gpus;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.devices()[id].spec.kind == DeviceKind::kGpu) gpus.push_back(id);
  }
  std::vector<DeviceId> ordered;
  for (const std::vector<DeviceId>& machine : members_by_node(gpus, cluster)) {
    ordered.insert(ordered.end(), machine.begin(), machine.end());
  }
  return ordered;
}

constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::array<double, 4> kBandUpperBytes = {64 * 1024.0, kMiB, 16 * kMiB, 256 * kMiB};
constexpr std::array<const char*, 5> kBandNames = {"<64K", "64K-1M", "1M-16M", "16M-256M", ">=256M"};

size_t band_of(double bytes) {
  size_t band = 0;
  while (band < kBandUpperBytes.size() && bytes >= kBandUpperBytes[band]) ++band;
  return band;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += value;
  return values.empty() ? NAN : sum / static_cast<double>(values.size());
}

/// The median (core/quantile.h), NaN for none: printed as "-".
double median_or_nan(const std::vector<double>& values) { return values.empty() ? NAN : median(values); }

std::string percent_or_dash(double fraction) {
  if (std::isnan(fraction)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f%%", fraction * 100);
  return buffer;
}

std::string size_text(double bytes) {
  char buffer[32];
  if (bytes >= kMiB) {
    std::snprintf(buffer, sizeof(buffer), "%gM", bytes / kMiB);
  } else if (bytes >= 1024) {
    std::snprintf(buffer, sizeof(buffer), "%gK", bytes / 1024);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%g", bytes);
  }
  return buffer;
}

}  // namespace

std::vector<CollectiveCheck> check_collective_curves(const HardwareCatalog& catalog) {
  CommunicationOptions nccl_framework;
  nccl_framework.framework = Framework::kPyTorchDdp;  // NCCL inside machines and between them
  std::vector<CollectiveCheck> checks;
  std::set<std::string> curves_seen;  // a curve's first point's source names its file and line
  for (const CheckedCluster& checked : checked_clusters(catalog)) {
    const Cluster measured = build_checked_cluster(checked, catalog, true);
    if (!measured.collective_profile) continue;
    const Cluster links_only = build_checked_cluster(checked, catalog, false);
    const std::vector<DeviceId> gpus = gpus_by_machine(links_only);
    for (const auto& [key, curve] : measured.collective_profile->curves) {
      if (curve.points.empty() || curve.gpus < 2 || static_cast<size_t>(curve.gpus) > gpus.size()) continue;
      if (!curves_seen.insert(curve.points.front().source).second) continue;
      const std::vector<DeviceId> group(gpus.begin(), gpus.begin() + curve.gpus);
      const std::optional<Transport> transport = collective_transport(nccl_framework, links_only, group);
      for (const CollectivePoint& point : curve.points) {
        CollectiveCheck check;
        check.cluster = checked.label;
        check.kind = curve.kind;
        check.gpus = curve.gpus;
        check.bytes = point.bytes;
        check.measured_seconds = curve.seconds(point.bytes);
        check.source = point.source;
        const CollectiveAlgorithm algorithm =
            checked.forced ? *checked.forced : choose_nccl_algorithm(curve.kind, group, point.bytes, links_only, nullptr);
        check.algorithm = to_string(algorithm);
        check.predicted_seconds = collective_seconds_over(curve.kind, algorithm, group, point.bytes, links_only,
                                                          transport ? &*transport : nullptr);
        const std::optional<NcclCollectiveTime> by_nccl = nccl_collective_time(
            curve.kind, algorithm, group, point.bytes, links_only, transport ? transport->link_efficiency() : 1.0);
        if (by_nccl) check.protocol = to_string(by_nccl->protocol);
        checks.push_back(std::move(check));
      }
    }
  }
  return checks;
}

size_t check_collective_checks_file(const std::filesystem::path& path, const HardwareCatalog& catalog) {
  const std::vector<CheckedCluster> clusters = read_checks_file(path);
  for (const CheckedCluster& checked : clusters) {
    build_checked_cluster(checked, catalog, true);
    build_checked_cluster(checked, catalog, false);
  }
  return clusters.size();
}

std::string collective_check_table(const std::vector<CollectiveCheck>& checks, bool every_point) {
  std::string out;
  char line[512];
  if (every_point) {
    std::snprintf(line, sizeof(line), "%-20s %-15s %4s %8s %13s %13s %-14s %-7s %8s\n", "cluster", "collective",
                  "gpus", "bytes", "measured us", "predicted us", "algorithm", "proto", "error");
    out += line;
    for (const CollectiveCheck& c : checks) {
      std::snprintf(line, sizeof(line), "%-20s %-15s %4d %8s %13.2f %13.2f %-14s %-7s %+7.1f%%\n",
                    c.cluster.c_str(), to_string(c.kind).c_str(), c.gpus, size_text(c.bytes).c_str(),
                    c.measured_seconds * 1e6, c.predicted_seconds * 1e6, c.algorithm.c_str(),
                    c.protocol.empty() ? "-" : c.protocol.c_str(), c.relative_error() * 100);
      out += line;
    }
    out += "\n";
  }
  // One line per curve, in the order checked.
  using CurveKey = std::tuple<std::string, CollectiveKind, int>;
  std::vector<CurveKey> order;
  std::map<CurveKey, std::array<std::vector<double>, kBandNames.size()>> errors;
  for (const CollectiveCheck& c : checks) {
    const CurveKey key{c.cluster, c.kind, c.gpus};
    if (!errors.count(key)) order.push_back(key);
    errors[key][band_of(c.bytes)].push_back(std::fabs(c.relative_error()));
  }
  std::snprintf(line, sizeof(line), "%-20s %-15s %4s", "cluster", "collective", "gpus");
  out += line;
  for (const char* band : kBandNames) {
    std::snprintf(line, sizeof(line), " %9s", band);
    out += line;
  }
  out += "       all  (mean |error| by size)\n";
  for (const CurveKey& key : order) {
    std::snprintf(line, sizeof(line), "%-20s %-15s %4d", std::get<0>(key).c_str(), to_string(std::get<1>(key)).c_str(),
                  std::get<2>(key));
    out += line;
    std::vector<double> all;
    for (const std::vector<double>& band : errors[key]) {
      std::snprintf(line, sizeof(line), " %9s", percent_or_dash(mean(band)).c_str());
      out += line;
      all.insert(all.end(), band.begin(), band.end());
    }
    std::snprintf(line, sizeof(line), " %9s\n", percent_or_dash(mean(all)).c_str());
    out += line;
  }
  std::vector<double> all;
  std::vector<double> from_one_mib;
  for (const CollectiveCheck& c : checks) {
    all.push_back(std::fabs(c.relative_error()));
    if (c.bytes >= kMiB) from_one_mib.push_back(std::fabs(c.relative_error()));
  }
  std::snprintf(line, sizeof(line),
                "Collectives: mean |error| %s, median %s over %zu measured points; from 1 MiB: mean %s, median %s over "
                "%zu\n",
                percent_or_dash(mean(all)).c_str(), percent_or_dash(median_or_nan(all)).c_str(), all.size(),
                percent_or_dash(mean(from_one_mib)).c_str(), percent_or_dash(median_or_nan(from_one_mib)).c_str(),
                from_one_mib.size());
  out += line;
  return out;
}

}  // namespace placesim
