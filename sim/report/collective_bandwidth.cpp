#include "sim/report/collective_bandwidth.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "sim/plan/nccl_cost_model.h"

namespace placesim {
namespace {

using RowKey = std::tuple<CollectiveKind, double, int, int, std::string, bool, std::string>;

int machines_of(const std::vector<DeviceId>& group, const Cluster& cluster) {
  std::vector<int> nodes;
  nodes.reserve(group.size());
  for (DeviceId id : group) nodes.push_back(cluster.device(id).node);
  std::sort(nodes.begin(), nodes.end());
  return static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

}  // namespace

std::string CollectiveBandwidthRow::timing() const {
  if (measured_curve) return "measured_curve";
  return nccl_protocol.empty() ? "link_rate" : "nccl_model";
}

CollectiveBandwidth collective_bandwidth(CollectiveKind kind, double bytes, int ranks, double seconds) {
  if (seconds <= 0 || ranks < 2) return {};
  const double algbw = bytes / seconds;
  return {algbw, algbw * bus_bandwidth_factor(kind, ranks)};
}

std::vector<CollectiveBandwidthRow> collective_bandwidth_table(const ExecutionPlan& plan, const Cluster& cluster,
                                                               const Timeline& timeline) {
  std::map<RowKey, CollectiveBandwidthRow> rows;
  // NCCL's protocol by (kind, algorithm, group, size, transport): buckets and micro-batches repeat them.
  std::map<std::tuple<CollectiveKind, CollectiveAlgorithm, std::vector<DeviceId>, double, int>, std::string> protocols;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.group.size() < 2 || task.bytes <= 0) continue;
    const int ranks = static_cast<int>(task.group.size());
    const std::string transport = task.transport >= 0 ? plan.transports.at(static_cast<size_t>(task.transport)).id : "links";
    // The engines time a collective by the measured curve exactly when one applies (sim/engine,
    // sim/analytical); the same test says which timed it here.
    const bool measured = measured_collective_seconds(task.collective, task.group, task.bytes, cluster).has_value();
    // Likewise NCCL's model, where its time stands above the links' (nccl_collective_time).
    std::string protocol;
    if (!measured && task.transport >= 0 && is_nccl_transport(plan.transports.at(static_cast<size_t>(task.transport)))) {
      auto [known, added] = protocols.try_emplace({task.collective, task.algorithm, task.group, task.bytes, task.transport});
      if (added) {
        const Transport& over = plan.transports.at(static_cast<size_t>(task.transport));
        const std::optional<NcclCollectiveTime> nccl = nccl_collective_time(
            task.collective, task.algorithm, task.group, task.bytes, cluster, over.link_efficiency());
        if (nccl && nccl->seconds > nccl->links_seconds) known->second = to_string(nccl->protocol);
      }
      protocol = known->second;
    }
    const double bytes = task.bytes;
    RowKey key{task.collective, bytes, ranks, machines_of(task.group, cluster), transport, measured, protocol};
    CollectiveBandwidthRow& row = rows[key];
    if (row.calls == 0) {
      row.kind = task.collective;
      row.bytes = bytes;
      row.ranks = ranks;
      row.machines = std::get<3>(key);
      row.transport = transport;
      row.measured_curve = measured;
      row.nccl_protocol = protocol;
    }
    ++row.calls;
    row.total_seconds += timeline.tasks[task.id].duration();
  }
  std::vector<CollectiveBandwidthRow> table;
  table.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.mean_seconds = row.total_seconds / static_cast<double>(row.calls);
    row.bandwidth = collective_bandwidth(row.kind, row.bytes, row.ranks, row.mean_seconds);
    table.push_back(std::move(row));
  }
  // The map's order (kind, then size ascending, ...) breaks ties; larger sizes first among equals.
  std::stable_sort(table.begin(), table.end(), [](const CollectiveBandwidthRow& a, const CollectiveBandwidthRow& b) {
    if (a.total_seconds != b.total_seconds) return a.total_seconds > b.total_seconds;
    return a.bytes > b.bytes;
  });
  return table;
}

Json collective_bandwidth_json(const std::vector<CollectiveBandwidthRow>& table) {
  Json rows = Json::array();
  for (const CollectiveBandwidthRow& row : table) {
    rows.push_back({{"collective", to_string(row.kind)},
                    {"bytes", row.bytes},
                    {"ranks", row.ranks},
                    {"machines", row.machines},
                    {"transport", row.transport},
                    {"timing", row.timing()},
                    {"calls", row.calls},
                    {"total_seconds", row.total_seconds},
                    {"mean_seconds", row.mean_seconds},
                    {"algbw_bytes_per_second", row.bandwidth.algbw_bytes_per_second},
                    {"busbw_bytes_per_second", row.bandwidth.busbw_bytes_per_second}});
    if (!row.nccl_protocol.empty()) rows.back()["nccl_protocol"] = row.nccl_protocol;
  }
  return rows;
}

}  // namespace placesim
