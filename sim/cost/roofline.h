// The roofline terms of a compute task priced without a kernel shape: its FLOPs at its kernel's
// format (kernel_precision.h) over the peak x the op kind's efficiency, and its bytes (at the
// kernel's operand size) over the bandwidth x a bandwidth fraction. The cost model, the kernel
// model's shapeless ops and the real backend's choice of work all start from these.
#pragma once

#include "sim/cluster/device_spec.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

struct RooflineTerms {
  double math_seconds = 0;
  double memory_seconds = 0;
};

/// Both terms before speed factors, compute scale and fixed costs; `bandwidth_fraction` is the
/// profile's (DeviceSpec::memory_efficiency_for) or its kernel model's.
RooflineTerms roofline_terms(const Task& task, Precision precision, const DeviceSpec& spec, double bandwidth_fraction);

}  // namespace placesim
