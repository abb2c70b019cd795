// Whether a cluster's devices can run a precision that has no fallback: fp8 needs an FP8
// tensor-core peak in each accelerator's profile (H100 SXM, H200); other precisions fall back.
#pragma once

#include <string>

#include "sim/cluster/cluster.h"
#include "sim/core/precision.h"

namespace placesim {

/// "" when every device that would run the step's GEMMs has `precision`'s own peak, or the
/// precision falls back (all but fp8); otherwise why not, naming each profile that lacks the
/// peak, its file and how many of the cluster's devices use it. The devices checked are the
/// accelerators, or the CPUs of a cluster without any.
std::string precision_unsupported_reason(const Cluster& cluster, Precision precision);

}  // namespace placesim
