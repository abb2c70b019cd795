#include "sim/report/json_report.h"

#include "sim/report/collective_bandwidth.h"
#include "sim/report/cost_provenance.h"
#include "sim/report/memory_verdict.h"

namespace placesim {

namespace {

/// A collective's size and what it achieved, by nccl-tests' definitions (doc/PERFORMANCE.md):
/// algbw = size / seconds, busbw = algbw x factor(kind, n) (sim/report/collective_bandwidth.h).
void add_collective_bandwidths(const Task& task, double seconds, Json* entry) {
  (*entry)["collective"] = to_string(task.collective);
  (*entry)["bytes"] = task.bytes;
  (*entry)["group_size"] = task.group.size();
  if (seconds <= 0 || task.group.size() < 2) return;
  const CollectiveBandwidth achieved =
      collective_bandwidth(task.collective, task.bytes, static_cast<int>(task.group.size()), seconds);
  (*entry)["algbw_bytes_per_second"] = achieved.algbw_bytes_per_second;
  (*entry)["busbw_bytes_per_second"] = achieved.busbw_bytes_per_second;
}

}  // namespace

Json json_report(const std::string& scenario, const ExecutionPlan& plan, const Cluster& cluster,
                 const Timeline& timeline, const RunMetrics& metrics) {
  Json devices = Json::array();
  for (const DeviceMetrics& device : metrics.devices) {
    const ClusterDevice& d = cluster.device(device.device);
    devices.push_back({{"name", d.name.canonical()},
                       {"profile", d.spec.id},
                       {"busy_seconds", device.busy_seconds},
                       {"utilization", device.utilization},
                       {"compute_tasks", device.compute_tasks},
                       {"transfer_in_seconds", device.transfer_in_seconds},
                       {"static_memory_bytes", device.static_memory_bytes},
                       {"peak_memory_bytes", device.peak_memory_bytes},
                       {"memory_capacity_bytes", device.memory_capacity_bytes},
                       {"out_of_memory", device.out_of_memory},
                       {"peak_memory", memory_breakdown_json(device.peak_memory)}});
  }
  Json path = Json::array();
  for (const auto& entry : metrics.critical_path) {
    path.push_back({{"task", entry.task},
                    {"name", plan.tasks[entry.task].name},
                    {"start_seconds", entry.start_seconds},
                    {"end_seconds", entry.end_seconds},
                    {"waiting_for", entry.waiting_for}});
  }
  Json tasks = Json::array();
  for (const Task& task : plan.tasks) {
    Json entry = {{"id", task.id},
                  {"name", task.name},
                  {"kind", to_string(task.kind)},
                  {"phase", to_string(task.phase)},
                  {"device", cluster.device(task.device).name.canonical()},
                  {"start_seconds", timeline.tasks[task.id].start_seconds},
                  {"end_seconds", timeline.tasks[task.id].end_seconds}};
    if (task.kind == TaskKind::kCompute) entry["op_kind"] = to_string(task.op_kind);
    if (task.kind == TaskKind::kTransfer) entry["source"] = cluster.device(task.source).name.canonical();
    if (task.kind == TaskKind::kCollective) {
      entry["algorithm"] = to_string(task.algorithm);
      add_collective_bandwidths(task, timeline.tasks[task.id].duration(), &entry);
    }
    if (task.replica >= 0) entry["replica"] = task.replica;
    tasks.push_back(std::move(entry));
  }
  return {{"schema_version", kReportSchemaVersion},
          {"kind", "placesim-report"},
          {"scenario", scenario},
          {"plan", plan.name},
          {"timeline_source", timeline.source},
          {"collective_fidelity", to_string(plan.collective_fidelity)},
          {"steps", plan.steps},
          {"samples_per_step", plan.samples_per_step},
          {"lockstep_gemm_factor", plan.lockstep_gemm_factor},
          {"lockstep_gpus", plan.lockstep_gpus},
          {"precision", to_string(plan.precision)},
          {"step_time_seconds", metrics.step_time_seconds},
          {"makespan_seconds", metrics.makespan_seconds},
          {"samples_per_second", metrics.samples_per_second},
          {"compute_seconds", metrics.compute_seconds},
          {"transfer_seconds", metrics.transfer_seconds},
          {"exposed_transfer_seconds", metrics.exposed_transfer_seconds},
          {"communication_share", metrics.communication_share},
          {"transferred_bytes", metrics.transferred_bytes},
          {"transfers", metrics.transfers},
          {"collectives", metrics.collectives},
          {"collective_bytes", metrics.collective_bytes},
          {"collective_bandwidth", collective_bandwidth_json(metrics.collective_bandwidth)},
          {"critical_path_compute_seconds", metrics.critical_path_compute_seconds},
          {"critical_path_transfer_seconds", metrics.critical_path_transfer_seconds},
          {"devices", devices},
          {"compute_costs", cost_sources_json(plan_cost_sources(cluster, plan))},
          {"critical_path", path},
          {"tasks", tasks}};
}

}  // namespace placesim
