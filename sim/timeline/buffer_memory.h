// Memory over a timeline: when each task's output buffer is allocated and released, the peak
// of the buffers a device holds at once, the workspace its GEMMs need, and the breakdown of a
// device's memory at its peak. Shared by the metrics (sim/report/metrics.h) and the closed-form
// tier (sim/analytical/pipeline_closed_form.h). Rules: docs/cost-model.md, "Memory".
#pragma once

#include <vector>

#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim {

/// What a device's memory holds at its peak, by purpose (docs/cost-model.md, "Memory").
struct MemoryBreakdown {
  double parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;  ///< moments, and fp32 master weights under mixed precision
  double activation_bytes = 0;       ///< live buffers at the peak: activations kept for backward, received tensors, gradients in flight
  double workspace_bytes = 0;        ///< the largest GEMM/convolution temporary among the device's tasks
  double total() const {
    return parameter_bytes + gradient_bytes + optimizer_state_bytes + activation_bytes + workspace_bytes;
  }
};

/// A task's output buffer on its device: allocated when the task starts, released when it, its
/// successors that read it (Task::reads_dep_outputs) and its keep_until tasks have all ended (at
/// the makespan when it has neither successors nor keep_until tasks). A collective's output is
/// on every member of its group, each copy released when the reading successors and keep_until
/// tasks that use that member have ended.
struct BufferLifetime {
  DeviceId device = 0;
  TaskId task = 0;
  double start_seconds = 0;
  double release_seconds = 0;
  double bytes = 0;
};
/// `successors`: the plan's (ExecutionPlan::successors) when the caller has them; null: built here.
std::vector<BufferLifetime> buffer_lifetimes(const ExecutionPlan& plan, const Timeline& timeline,
                                             const SuccessorLists* successors = nullptr);

/// Per device: the peak of the bytes its buffers hold at once (a release before an allocation
/// at the same instant).
std::vector<double> peak_live_bytes(const std::vector<BufferLifetime>& buffers, size_t devices);

/// Per device: the workspace the memory model reserves, the largest output of its GEMM and
/// convolution tasks (docs/cost-model.md, "Memory").
std::vector<double> workspace_bytes(const ExecutionPlan& plan, size_t devices);

}  // namespace placesim
