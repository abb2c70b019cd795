// ReadyTasks: the PlanEngine contract's dispatch rule, on a hand-made plan: ready after the last
// dependency, one compute task per device at a time, the lowest ready id first, and only the
// handled part of a plan split between hosts.
#include "sim/plan/ready_tasks.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::add;
using testing::compute_task;
using testing::transfer_task;

// GPU:0 runs 0 and 1 (no deps) and 3 (after 0); 2 sends 0's output to GPU:1;
// GPU:1 runs 4 after 2 and 3.
ExecutionPlan diamond(const Cluster& cluster) {
  ExecutionPlan plan = testing::empty_plan(cluster);
  add(plan, compute_task(0, 1e9));             // 0
  add(plan, compute_task(0, 1e9));             // 1
  add(plan, transfer_task(0, 1, 1e6), {0});    // 2
  add(plan, compute_task(0, 1e9), {0});        // 3
  add(plan, compute_task(1, 1e9), {2, 3});     // 4
  return plan;
}

TEST(ReadyTasks, ReadyAfterTheLastDependencyOneComputeTaskPerDeviceLowestIdFirst) {
  const Cluster cluster = testing::gpus(2);
  const ExecutionPlan plan = diamond(cluster);
  ReadyTasks ready(plan, 2);
  EXPECT_EQ(ready.handled_count(), 5u);
  EXPECT_EQ(ready.initially_ready(), (std::vector<TaskId>{0, 1}));
  ready.queue_compute(1);
  ready.queue_compute(0);
  EXPECT_EQ(ready.next_compute(1), std::nullopt);  // nothing queued on GPU:1
  ASSERT_EQ(ready.next_compute(0), TaskId{0});     // lowest id first, whatever the queue order
  ready.set_busy(0, true);
  EXPECT_EQ(ready.next_compute(0), std::nullopt);  // busy: 1 waits
  std::vector<TaskId> became_ready;
  auto collect = [&](TaskId id) { became_ready.push_back(id); };
  ready.complete(0, collect);
  EXPECT_EQ(became_ready, (std::vector<TaskId>{2, 3}));  // successor order
  ready.set_busy(0, false);
  ready.queue_compute(3);
  EXPECT_EQ(ready.next_compute(0), TaskId{1});
  EXPECT_EQ(ready.next_compute(0), TaskId{3});
  became_ready.clear();
  ready.complete(2, collect);
  EXPECT_TRUE(became_ready.empty());  // 4 still waits for 3
  ready.complete(1, collect);
  ready.complete(3, collect);
  EXPECT_EQ(became_ready, (std::vector<TaskId>{4}));
  ready.complete(4, collect);
  EXPECT_EQ(ready.completed(), 5u);
}

TEST(ReadyTasks, RestartForgetsARunsProgress) {
  const Cluster cluster = testing::gpus(2);
  const ExecutionPlan plan = diamond(cluster);
  ReadyTasks ready(plan, 2);
  ready.queue_compute(1);
  ready.set_busy(0, true);
  ready.complete(0, [](TaskId) {});
  ready.restart();
  EXPECT_EQ(ready.completed(), 0u);
  EXPECT_EQ(ready.initially_ready(), (std::vector<TaskId>{0, 1}));  // 2 and 3 wait for 0 again
  EXPECT_EQ(ready.next_compute(0), std::nullopt);                   // idle, and 1 is no longer queued
  std::vector<TaskId> became_ready;
  ready.complete(0, [&](TaskId id) { became_ready.push_back(id); });
  EXPECT_EQ(became_ready, (std::vector<TaskId>{2, 3}));
}

TEST(ReadyTasks, ADependencyAnotherHostRunsDoesNotHoldATaskBack) {
  const Cluster cluster = testing::gpus(2);
  const ExecutionPlan plan = diamond(cluster);
  // This host runs 1, 3 and 4; 0 and 2 run elsewhere (a message carries them).
  const std::vector<bool> here = {false, true, false, true, true};
  ReadyTasks ready(plan, 2, &here);
  EXPECT_EQ(ready.handled_count(), 3u);
  EXPECT_EQ(ready.initially_ready(), (std::vector<TaskId>{1, 3}));
  std::vector<TaskId> became_ready;
  ready.complete(3, [&](TaskId id) { became_ready.push_back(id); });
  EXPECT_EQ(became_ready, (std::vector<TaskId>{4}));
}

}  // namespace
}  // namespace placesim
