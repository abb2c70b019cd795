// run_plan_once: the dispatch loop's order (deps first, one compute task per device, lowest id
// first) and a host's part of a multi-host plan (runs_here), with a launcher that only records.
#include "real_backend/runtime/scheduler.h"

#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace placesim::real {
namespace {

using testing::add;
using testing::compute_task;
using testing::transfer_task;

/// Finishes every task at once, at "time" = its launch number, and records the launch order.
class RecordingLauncher : public TaskLauncher {
 public:
  std::vector<TaskId> launched;
  void begin_run(double) override { launched.clear(); }
  bool is_empty(const Task& task) const override { return task.flops == 0 && task.bytes == 0; }
  void start_compute(const Task& task, CompletionQueue& done) override { finish(task, done); }
  void start_transfer(const Task& task, CompletionQueue& done) override { finish(task, done); }
  void finish_run(Timeline&) override {}

 private:
  void finish(const Task& task, CompletionQueue& done) {
    launched.push_back(task.id);
    done.push({task.id, double(launched.size())});
  }
};

TEST(DispatchLoop, RunsDepsFirstAndTheLowestReadyIdOfADeviceFirst) {
  Cluster cluster = testing::gpus(2);
  ExecutionPlan plan = testing::empty_plan(cluster);
  TaskId late = add(plan, compute_task(0, 1e9), {2});  // 0: after 2
  add(plan, compute_task(0, 1e9));                     // 1: a root
  add(plan, compute_task(0, 1e9));                     // 2: a root
  add(plan, transfer_task(0, 1, 1e6), {late});         // 3: after 0
  RecordingLauncher launcher;
  Timeline timeline = run_plan_once(plan, cluster.devices().size(), launcher, "test");
  EXPECT_EQ(launcher.launched, (std::vector<TaskId>{1, 2, 0, 3}));
  EXPECT_EQ(timeline.tasks[3].end_seconds, 4.0);
}

TEST(DispatchLoop, RunsOnlyThisHostsPartAndDoesNotWaitForTheOthers) {
  Cluster cluster = testing::gpus(2);
  ExecutionPlan plan = testing::empty_plan(cluster);
  TaskId remote = add(plan, compute_task(1, 1e9));           // 0: another host's
  TaskId mine = add(plan, compute_task(0, 1e9));             // 1
  TaskId received = add(plan, transfer_task(1, 0, 1e6), {remote});  // 2: received here
  add(plan, compute_task(0, 1e9), {mine, received});         // 3
  add(plan, compute_task(1, 1e9), {remote});                 // 4: another host's
  const std::vector<bool> runs_here = {false, true, true, true, false};
  RecordingLauncher launcher;
  Timeline timeline = run_plan_once(plan, cluster.devices().size(), launcher, "test", &runs_here);
  // The received transfer is ready at once (its dep runs elsewhere); 3 waits for 1 and 2 only.
  EXPECT_EQ(launcher.launched, (std::vector<TaskId>{2, 1, 3}));
  EXPECT_EQ(timeline.tasks[0].end_seconds, 0.0) << "never run here";
  EXPECT_EQ(timeline.tasks[4].end_seconds, 0.0) << "never run here";
}

}  // namespace
}  // namespace placesim::real
