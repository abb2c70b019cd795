#include "real_backend/cpu/collective_buffers.h"

#include <algorithm>

namespace placesim::real {

CollectiveBuffer* CollectiveBufferPool::acquire(DeviceId device, size_t elements) {
  std::vector<CollectiveBuffer*>& free = free_[device];
  CollectiveBuffer* buffer = nullptr;
  auto fits = std::find_if(free.begin(), free.end(), [&](CollectiveBuffer* b) { return b->values.size() >= elements; });
  if (fits != free.end()) {
    buffer = *fits;
    free.erase(fits);
  } else if (!free.empty()) {
    buffer = free.back();
    free.pop_back();
  } else {
    buffers_.push_back(std::make_unique<CollectiveBuffer>());
    buffer = buffers_.back().get();
  }
  if (buffer->values.size() < elements) buffer->values.resize(elements, 0.0f);
  return buffer;
}

void CollectiveBufferPool::release(DeviceId device, CollectiveBuffer* buffer) { free_[device].push_back(buffer); }

void CollectiveBufferPool::clear() {
  free_.clear();
  buffers_.clear();
}

}  // namespace placesim::real
