// InOrderRelease: releases jobs in the plan's topological order, so that both ends of a
// cross-host channel and every rank of a communicator make their calls in the same order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <vector>

#include "sim/plan/execution_plan.h"

namespace placesim::real {

/// Releases jobs in one fixed order: a job marked ready is released once every job before it
/// in the order has been. Both ends of a cross-host channel, and every rank of a communicator,
/// release in the plan's topological order, so no rank waits for a message or a collective
/// call that another makes only later.
struct InOrderRelease {
  std::vector<TaskId> order;
  std::map<TaskId, size_t> index;
  std::vector<bool> ready;
  size_t next = 0;

  void add(TaskId id) { order.push_back(id); }
  /// Sorts the jobs by topological position; call once all are added.
  void seal(const std::vector<size_t>& position) {
    std::sort(order.begin(), order.end(), [&](TaskId a, TaskId b) { return position[a] < position[b]; });
    for (size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
    reset();
  }
  void reset() {
    ready.assign(order.size(), false);
    next = 0;
  }
  template <typename Release>
  void mark_ready(TaskId id, Release release) {
    ready[index.at(id)] = true;
    while (next < order.size() && ready[next]) release(order[next++]);
  }
};

}  // namespace placesim::real
