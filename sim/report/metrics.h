// Metrics of one run, derived from a plan and its timeline only (predicted or measured):
// step time, throughput, per-device busy time, transfers and communication share, the
// critical path, and peak memory per device.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/report/collective_bandwidth.h"
#include "sim/timeline/buffer_memory.h"
#include "sim/timeline/timeline.h"

namespace placesim {

struct DeviceMetrics {
  DeviceId device = 0;
  double busy_seconds = 0;         ///< sum of its compute task durations
  double utilization = 0;          ///< busy / makespan
  double transfer_in_seconds = 0;  ///< time with at least one transfer into it in flight
  double static_memory_bytes = 0;  ///< parameters + gradients + optimizer state
  double peak_memory_bytes = 0;    ///< static + the largest set of live buffers + workspace
  MemoryBreakdown peak_memory;     ///< peak_memory_bytes by purpose
  double memory_capacity_bytes = 0;
  bool out_of_memory = false;
  size_t compute_tasks = 0;
};

struct CriticalPathEntry {
  TaskId task = 0;
  double start_seconds = 0;
  double end_seconds = 0;
  std::string waiting_for;  ///< "data" (a dependency), "device" (its stream was busy), "" (first)
};

struct RunMetrics {
  double makespan_seconds = 0;
  double step_time_seconds = 0;       ///< makespan / steps
  double samples_per_second = 0;
  double compute_seconds = 0;         ///< union of compute intervals over all devices
  double transfer_seconds = 0;        ///< union of transfer and collective intervals
  double exposed_transfer_seconds = 0;///< transfers or collectives in flight while no device computes
  double communication_share = 0;     ///< exposed transfer / makespan
  double transferred_bytes = 0;  ///< point-to-point transfers
  double collective_bytes = 0;   ///< sum of all-reduced buffer sizes (per device)
  size_t tasks = 0;
  size_t transfers = 0;
  size_t collectives = 0;
  /// The collectives by kind, size, ranks, machines, transport and timing, with nccl-tests'
  /// algbw and busbw; largest total time first.
  std::vector<CollectiveBandwidthRow> collective_bandwidth;
  std::vector<DeviceMetrics> devices;
  std::vector<CriticalPathEntry> critical_path;  ///< from the first task to the last to finish
  double critical_path_compute_seconds = 0;
  double critical_path_transfer_seconds = 0;
};

RunMetrics compute_metrics(const ExecutionPlan& plan, const Cluster& cluster, const Timeline& timeline);

/// The device with the largest peak memory (the first of equals); null when there is none.
const DeviceMetrics* fullest_device(const RunMetrics& metrics);

/// Length of the union of [start, end) intervals.
double union_length(std::vector<std::pair<double, double>> intervals);

}  // namespace placesim
