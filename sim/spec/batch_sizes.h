// The three batches a strategy's step names (docs/llm-planning.md): the per-replica batch
// (`run.batch_size`), the micro-batch a pipeline stage runs at a time, and the global batch that
// one optimizer step sees over all data-parallel replicas.
#pragma once

#include <cstdint>

#include "sim/spec/run_options.h"
#include "sim/spec/strategy.h"

namespace placesim {

struct BatchSizes {
  int64_t per_replica = 1;    ///< samples one replica (one model copy) processes per step
  int64_t micro_batches = 1;  ///< per replica and step (pipelines; 1 otherwise)
  int64_t replicas = 1;       ///< data-parallel width (`data`, or the data-parallel replicas)
  double micro() const { return static_cast<double>(per_replica) / static_cast<double>(micro_batches); }
  int64_t global() const { return per_replica * replicas; }
};

/// The batches of `strategy` when each replica runs `run.batch_size` samples per step.
BatchSizes batch_sizes(const Strategy& strategy, const RunOptions& run);

}  // namespace placesim
