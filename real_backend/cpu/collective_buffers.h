// The CPU executor's all-reduce buffers: each plan device's float buffers, one held by every
// member of a running collective from its start to its end, then reused by later collectives, so
// memory follows the collectives running at once rather than the plan's length. New buffers hold
// zeros, and sums of zeros stay zeros: the executor adds real floats without ever overflowing.
//
// Thread-safety: acquire and release need external locking (the executor's lock); a buffer's
// elements are touched by copy threads as the schedule's dependencies allow, and adds into one
// buffer from different threads take its `reduce` mutex (two tree children may add at once).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim::real {

struct CollectiveBuffer {
  std::vector<float> values;
  std::mutex reduce;
};

class CollectiveBufferPool {
 public:
  /// A free buffer of `device` with at least `elements` elements, grown or allocated when none is.
  CollectiveBuffer* acquire(DeviceId device, size_t elements);
  /// Gives `buffer` (from acquire on `device`) back for later collectives.
  void release(DeviceId device, CollectiveBuffer* buffer);
  /// Frees every buffer.
  void clear();

 private:
  std::vector<std::unique_ptr<CollectiveBuffer>> buffers_;
  std::map<DeviceId, std::vector<CollectiveBuffer*>> free_;
};

}  // namespace placesim::real
