#include "sim/spec/batch_sizes.h"

namespace placesim {

BatchSizes batch_sizes(const Strategy& strategy, const RunOptions& run) {
  BatchSizes batch;
  batch.per_replica = run.batch_size;
  if (strategy.parallelism) {
    batch.micro_batches = strategy.parallelism->micro_batches;
    batch.replicas = strategy.parallelism->data;
  } else if (strategy.pipeline) {
    batch.micro_batches = strategy.pipeline->micro_batches;
  } else if (strategy.data_parallel) {
    batch.replicas = static_cast<int64_t>(strategy.data_parallel->replicas.size());
  }
  return batch;
}

}  // namespace placesim
