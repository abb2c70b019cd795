// Cost model: how long a compute task takes on a device (a roofline with per-op-kind
// efficiencies plus a launch overhead) and what an uncontended transfer costs on a route.
// Formulas and the sources of default numbers: docs/cost-model.md.
#pragma once

#include "sim/cluster/cluster.h"
#include "sim/core/memory_format.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

/// max(flops / (peak[precision] x efficiency[kind]), bytes / (memory bandwidth x memory
/// efficiency)) / speed_factor x compute_scale + launch overhead; a convolution in an NCHW
/// framework on tensor cores adds its layout transposes (layout_transposes.h). Under fp8 the peak and the bytes
/// are those of the task's kernel (kernel_precision.h: FP8 GEMMs with 1-byte operands, bf16 otherwise), and a
/// dense layer's GEMM adds Transformer Engine's casts of its input and output gradient (fp8_casts.h). A task with no FLOPs and no bytes launches
/// nothing and costs 0 (a variable, an identity on a reference, a NoOp). A GEMM or convolution on a
/// GPU whose profile has a spread of speeds takes `lockstep_gemm_factor` times its kernel time
/// (ExecutionPlan::lockstep_gemm_factor).
double compute_seconds(const Task& task, Precision precision, MemoryFormat format, const ClusterDevice& device,
                       double lockstep_gemm_factor = 1.0);

/// Latency of every hop plus bytes over the slowest hop: a transfer alone on its route.
double uncontended_transfer_seconds(double bytes, DeviceId from, DeviceId to, const Cluster& cluster);

}  // namespace placesim
