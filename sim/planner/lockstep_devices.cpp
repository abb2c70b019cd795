#include "sim/planner/lockstep_devices.h"

#include <algorithm>

#include "sim/cluster/device_spread.h"

namespace placesim {

namespace {

struct SpreadGpus {
  int64_t count = 0;
  double log_sigma = 0;  ///< the widest among them
};

SpreadGpus spread_gpus(const Cluster& cluster, const std::vector<DeviceId>& devices) {
  // A device that shares another's compute (a second stream on the same GPU) is that GPU.
  std::vector<DeviceId> distinct;
  distinct.reserve(devices.size());
  for (DeviceId id : devices) distinct.push_back(cluster.device(id).shares_compute_with.value_or(id));
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  SpreadGpus gpus;
  for (DeviceId id : distinct) {
    const DeviceSpec& spec = cluster.device(id).spec;
    if (!spec.gemm_time_spread) continue;
    ++gpus.count;
    gpus.log_sigma = std::max(gpus.log_sigma, spec.gemm_time_spread->log_sigma);
  }
  return gpus;
}

}  // namespace

void set_lockstep_devices(const Cluster& cluster, const std::vector<DeviceId>& devices, const RunOptions& run,
                          ExecutionPlan* plan) {
  if (!run.gpu_spread) return;
  const SpreadGpus gpus = spread_gpus(cluster, devices);
  plan->lockstep_gemm_factor = expected_slowest_of(gpus.log_sigma, gpus.count);
  plan->lockstep_gpus = std::max<int64_t>(gpus.count, 1);
}

}  // namespace placesim
