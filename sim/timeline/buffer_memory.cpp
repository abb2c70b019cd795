#include "sim/timeline/buffer_memory.h"

#include <algorithm>

namespace placesim {

std::vector<BufferLifetime> buffer_lifetimes(const ExecutionPlan& plan, const Timeline& timeline) {
  auto successors = plan.successors();
  std::vector<BufferLifetime> buffers;
  for (const Task& task : plan.tasks) {
    if (task.output_bytes <= 0) continue;
    double release = timeline.tasks[task.id].end_seconds;
    for (TaskId s : successors[task.id]) release = std::max(release, timeline.tasks[s].end_seconds);
    for (TaskId k : task.keep_until) release = std::max(release, timeline.tasks[k].end_seconds);
    if (successors[task.id].empty() && task.keep_until.empty()) release = timeline.makespan_seconds();
    buffers.push_back({task.device, task.id, timeline.tasks[task.id].start_seconds, release, task.output_bytes});
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
    if (task.kind == TaskKind::kCompute && (task.op_kind == OpKind::kMatMul || task.op_kind == OpKind::kConv)) {
      workspace[task.device] = std::max(workspace[task.device], task.output_bytes);
    }
  }
  return workspace;
}

}  // namespace placesim
