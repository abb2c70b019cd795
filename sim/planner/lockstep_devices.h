// The GPUs a synchronous step keeps in lockstep, and how much longer their GEMMs take for it: the
// expected slowest of them, from their profile's measured spread of speeds (docs/cost-model.md,
// "The slowest GPU sets a synchronous step's pace").
#pragma once

#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/spec/run_options.h"

namespace placesim {

/// Sets `plan`'s lockstep_gemm_factor and lockstep_gpus for a step whose `devices` wait for one
/// another every step (synchronous data-parallel replicas, pipeline stages, a 3D layout's
/// devices): the expected slowest of the GPUs among them whose profile has a spread, at the widest
/// spread among them, and how many they are; leaves 1 and 1 with run.gpu_spread off. Repeated
/// devices, and a device with the one whose compute it shares (`shares_compute_with`), count once.
void set_lockstep_devices(const Cluster& cluster, const std::vector<DeviceId>& devices, const RunOptions& run,
                          ExecutionPlan* plan);

}  // namespace placesim
