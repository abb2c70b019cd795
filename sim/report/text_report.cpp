#include "sim/report/text_report.h"

#include <algorithm>
#include <cstdio>

#include "sim/report/cost_provenance.h"
#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

constexpr size_t kCollectiveRows = 10;

/// The collectives table's timing column: the row's timing() in a few words ("curve", "nccl LL128", "link rate").
std::string timing_text(const CollectiveBandwidthRow& row) {
  const std::string timing = row.timing();
  if (timing == "measured_curve") return "curve";
  return timing == "nccl_model" ? "nccl " + row.nccl_protocol : "link rate";
}

}  // namespace

std::string collective_bandwidth_text(const std::vector<CollectiveBandwidthRow>& table) {
  if (table.empty()) return "";
  std::string out = "\nCollectives (nccl-tests: algbw = size / time, busbw = algbw x factor; docs/communication.md):\n";
  out += "  " + pad("collective", 14, true) + "  " + pad("size (B)", 12) + "  " + pad("ranks", 5) + "  " + pad("machines", 8) +
         "  " + pad("transport", 11, true) + "  " + pad("timing", 11, true) + "  " + pad("calls", 6) + "  " +
         pad("time/call", 10) + "  " + pad("algbw GB/s", 10) + "  " + pad("busbw GB/s", 10) + "\n";
  for (size_t i = 0; i < std::min(table.size(), kCollectiveRows); ++i) {
    const CollectiveBandwidthRow& row = table[i];
    out += "  " + pad(to_string(row.kind), 14, true) + "  " + pad(format_number(row.bytes, "%.0f"), 12) + "  " +
           pad(std::to_string(row.ranks), 5) + "  " + pad(std::to_string(row.machines), 8) + "  " +
           pad(row.transport, 11, true) + "  " + pad(timing_text(row), 11, true) + "  " +
           pad(std::to_string(row.calls), 6) + "  " + pad(format_seconds(row.mean_seconds), 10) + "  " +
           pad(format_number(row.bandwidth.algbw_bytes_per_second / 1e9, "%.2f"), 10) + "  " +
           pad(format_number(row.bandwidth.busbw_bytes_per_second / 1e9, "%.2f"), 10) + "\n";
  }
  if (table.size() > kCollectiveRows) {
    size_t calls = 0;
    double seconds = 0;
    for (size_t i = kCollectiveRows; i < table.size(); ++i) {
      calls += table[i].calls;
      seconds += table[i].total_seconds;
    }
    out += "  +" + std::to_string(table.size() - kCollectiveRows) + " more (" + std::to_string(calls) + " calls, " +
           format_seconds(seconds) + " in all)\n";
  }
  return out;
}

std::string lockstep_text(double lockstep_gemm_factor, int64_t lockstep_gpus) {
  if (lockstep_gemm_factor == 1.0) return "";
  return "GEMMs at the slowest GPU's pace: x" + format_number(lockstep_gemm_factor, "%.4f") + ", the expected slowest of " +
         std::to_string(lockstep_gpus) +
         " GPUs in lockstep, from their measured spread of speeds (docs/cost-model.md; \"gpu_spread\": \"none\" runs every GPU alike)\n";
}

std::string text_report(const ExecutionPlan& plan, const Cluster& cluster, const RunMetrics& metrics,
                        size_t max_path_entries, TimelineOrigin origin, const TrainingEfficiency* efficiency) {
  std::string out;
  out += (origin == TimelineOrigin::kMeasured ? "Measured step time: " : "Predicted step time: ") +
         format_seconds(metrics.step_time_seconds);
  if (plan.steps > 1) out += " (mean of " + std::to_string(plan.steps) + " steps, " + format_seconds(metrics.makespan_seconds) + " in all)";
  out += "\n";
  out += "Throughput: " + format_rate(metrics.samples_per_second, "samples") + " (" +
         std::to_string(plan.samples_per_step) + " samples per step)\n";
  out += lockstep_text(plan.lockstep_gemm_factor, plan.lockstep_gpus);
  if (efficiency) out += efficiency_text(*efficiency);
  out += "\n";

  size_t name_width = 12;
  for (const auto& device : cluster.devices()) name_width = std::max(name_width, device.name.canonical().size());
  out += pad("Device", name_width, true) + "  " + pad("busy", 12) + "  " + pad("util", 7) + "  " +
         pad("peak memory", 12) + "  " + pad("capacity", 10) + "\n";
  for (const DeviceMetrics& device : metrics.devices) {
    const ClusterDevice& d = cluster.device(device.device);
    out += pad(d.name.canonical(), name_width, true) + "  " + pad(format_seconds(device.busy_seconds), 12) + "  " +
           pad(format_percent(device.utilization), 7) + "  " + pad(format_bytes(device.peak_memory_bytes), 12) +
           "  " + pad(format_bytes(device.memory_capacity_bytes), 10) +
           (device.out_of_memory ? "  OUT OF MEMORY" : "") + "  " + d.spec.name + "\n";
  }
  out += "\n" + cost_sources_text(plan_cost_sources(cluster, plan));
  out += "\nMemory at peak:\n";
  for (const DeviceMetrics& device : metrics.devices) {
    if (device.peak_memory_bytes <= 0) continue;
    out += "  " + pad(cluster.device(device.device).name.canonical(), name_width, true) + "  " +
           describe_memory(device.peak_memory) + "\n";
  }
  out += "\nTransfers: " + std::to_string(metrics.transfers) + " moving " + format_bytes(metrics.transferred_bytes);
  if (metrics.collectives > 0) {
    out += "; all-reduces: " + std::to_string(metrics.collectives) + " of " + format_bytes(metrics.collective_bytes) + " in all";
  }
  out += "; in flight " + format_seconds(metrics.transfer_seconds) + ", exposed (no device computing) " +
         format_seconds(metrics.exposed_transfer_seconds) + " = " + format_percent(metrics.communication_share) +
         " of the run\n";
  out += "Compute: some device busy for " + format_seconds(metrics.compute_seconds) + " of " +
         format_seconds(metrics.makespan_seconds) + "\n";
  out += collective_bandwidth_text(metrics.collective_bandwidth);

  out += "\nCritical path: " + std::to_string(metrics.critical_path.size()) + " tasks, compute " +
         format_seconds(metrics.critical_path_compute_seconds) + ", transfer " +
         format_seconds(metrics.critical_path_transfer_seconds) + "\n";
  const auto& path = metrics.critical_path;
  size_t head = path.size() <= max_path_entries ? path.size() : max_path_entries / 2;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i == head && path.size() > max_path_entries) {
      out += "  ... " + std::to_string(path.size() - max_path_entries) + " more ...\n";
      i = path.size() - (max_path_entries - head);
    }
    const auto& entry = path[i];
    const Task& task = plan.tasks[entry.task];
    std::string where = task.kind == TaskKind::kCompute    ? cluster.device(task.device).name.local()
                        : task.kind == TaskKind::kTransfer ? cluster.device(task.source).name.local() + "->" +
                                                                 cluster.device(task.device).name.local()
                                                           : std::to_string(task.group.size()) + " devices";
    out += "  " + pad(format_seconds(entry.start_seconds), 11) + " +" +
           pad(format_seconds(entry.end_seconds - entry.start_seconds), 11, true) + " " + pad(to_string(task.phase), 9, true) + " " +
           pad(where, 14, true) + " " + task.name + "\n";
  }
  return out;
}

}  // namespace placesim
