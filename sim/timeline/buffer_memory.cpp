#include "sim/timeline/buffer_memory.h"

#include <algorithm>
#include <cstdint>

namespace placesim {

namespace {

/// Whether `task` uses `device`: runs there, sends from it, or counts it in its group.
bool touches(const Task& task, DeviceId device) {
  if (task.device == device) return true;
  if (task.kind == TaskKind::kTransfer) return task.source == device;
  if (task.kind == TaskKind::kCollective) return std::find(task.group.begin(), task.group.end(), device) != task.group.end();
  return false;
}

}  // namespace

std::vector<BufferLifetime> buffer_lifetimes(const ExecutionPlan& plan, const Timeline& timeline,
                                             const SuccessorLists* given_successors) {
  const SuccessorLists built = given_successors ? SuccessorLists() : plan.successors();
  const SuccessorLists& successors = given_successors ? *given_successors : built;
  // The flags densely (a task's successors are scattered over a plan of millions of tasks).
  std::vector<uint8_t> reads(plan.tasks.size());
  for (const Task& task : plan.tasks) reads[task.id] = task.reads_dep_outputs;
  std::vector<BufferLifetime> buffers;
  for (const Task& task : plan.tasks) {
    if (task.output_bytes <= 0) continue;
    const double start = timeline.tasks[task.id].start_seconds;
    double release = timeline.tasks[task.id].end_seconds;
    for (TaskId s : successors[task.id]) {
      if (reads[s]) release = std::max(release, timeline.tasks[s].end_seconds);
    }
    for (TaskId k : task.keep_until) release = std::max(release, timeline.tasks[k].end_seconds);
    if (successors[task.id].empty() && task.keep_until.empty()) release = timeline.makespan_seconds();
    if (task.kind != TaskKind::kCollective || task.group.size() < 2) {
      buffers.push_back({task.device, task.id, start, release, task.output_bytes});
      continue;
    }
    // A collective's output is on every member; each copy lives until the successors that use
    // that member have ended (all of them when none does).
    for (DeviceId member : task.group) {
      double member_release = timeline.tasks[task.id].end_seconds;
      bool used = false;
      for (TaskId s : successors[task.id]) {
        if (!reads[s] || !touches(plan.tasks[s], member)) continue;
        used = true;
        member_release = std::max(member_release, timeline.tasks[s].end_seconds);
      }
      for (TaskId k : task.keep_until) {
        if (!touches(plan.tasks[k], member)) continue;
        used = true;
        member_release = std::max(member_release, timeline.tasks[k].end_seconds);
      }
      buffers.push_back({member, task.id, start, used ? member_release : release, task.output_bytes});
    }
  }
  return buffers;
}

std::vector<double> peak_live_bytes(const std::vector<BufferLifetime>& buffers, size_t devices) {
  std::vector<std::vector<std::pair<double, double>>> events(devices);  // (time, +/- bytes)
  for (const BufferLifetime& buffer : buffers) {
    events[buffer.device].push_back({buffer.start_seconds, buffer.bytes});
    events[buffer.device].push_back({buffer.release_seconds, -buffer.bytes});
  }
  std::vector<double> peaks(devices, 0);
  for (size_t d = 0; d < devices; ++d) {
    auto& list = events[d];
    // Frees before allocations at the same instant.
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    });
    double live = 0;
    for (const auto& [time, delta] : list) {
      live += delta;
      peaks[d] = std::max(peaks[d], live);
    }
  }
  return peaks;
}

std::vector<double> workspace_bytes(const ExecutionPlan& plan, size_t devices) {
  // GEMM and convolution kernels need a temporary (cuBLAS split-K partial tiles, cuDNN's lowered
  // im2col/FFT buffers: Chetlur et al. 2014, "cuDNN", section 3); we take it to be as large as
  // the kernel's output and reserve the largest one on each device. Elementwise, normalization
  // and copy kernels stream in place and need none.
  std::vector<double> workspace(devices, 0);
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCompute && is_gemm_kind(task.op_kind)) {
      workspace[task.device] = std::max(workspace[task.device], task.output_bytes);
    }
  }
  return workspace;
}

}  // namespace placesim
