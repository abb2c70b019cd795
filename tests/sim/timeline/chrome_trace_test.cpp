// The Chrome trace's rows (sim/timeline/chrome_trace.h): a viewer draws each (pid, tid) as a stack
// of properly nested or disjoint slices, so collectives (and transfers on a link) that overlap in
// time are spread over lanes: each goes to the lowest-numbered lane free at its start, in order of
// start, then task id. Hand-made plans and timelines with round times, in seconds.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/scenario/scenario_loader.h"
#include "sim/session/pipeline.h"
#include "sim/timeline/chrome_trace.h"
#include "tests/support/test_support.h"
#include "tests/support/trace_rows.h"

namespace placesim {
namespace {

using testing::add;
using testing::empty_plan;
using testing::gpus;
using testing::improperly_nested_slices;
using testing::round_link;
using testing::transfer_task;

Task collective_task(std::vector<DeviceId> group, double bytes = 1e6) {
  Task task;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kBackward;
  task.device = group.front();
  task.group = std::move(group);
  task.bytes = bytes;
  return task;
}

Timeline timeline_of(const std::vector<TaskInterval>& intervals) { return Timeline{"test", intervals}; }

/// The tid of task `task`'s "X" event in process `pid` (-1 if it has none there).
int64_t tid_of(const Json& trace, TaskId task, int64_t pid) {
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "X" && event.at("pid") == pid && event.at("args").at("task") == task) {
      return event.at("tid").get<int64_t>();
    }
  }
  return -1;
}

/// The name given to thread `tid` of process `pid` by a thread_name metadata event ("" if none).
std::string thread_name(const Json& trace, int64_t pid, int64_t tid) {
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "M" && event.at("name") == "thread_name" && event.at("pid") == pid &&
        event.at("tid") == tid) {
      return event.at("args").at("name").get<std::string>();
    }
  }
  return "";
}

constexpr int64_t kFirstCollectiveLane = 1;  // tid 0 is the device's compute stream

TEST(ChromeTrace, OverlappingCollectivesOnADeviceGoToTheLowestFreeLane) {
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId first = add(plan, collective_task({0, 1}));
  TaskId second = add(plan, collective_task({0, 1}));
  TaskId third = add(plan, collective_task({0, 1}));
  // [0, 2] and [1, 3] overlap; [2.5, 4] starts after the first has ended and reuses its lane.
  Json trace = chrome_trace(plan, cluster, timeline_of({{0, 2}, {1, 3}, {2.5, 4}}));
  for (int64_t pid : {0, 1}) {
    EXPECT_EQ(tid_of(trace, first, pid), kFirstCollectiveLane + 0) << "pid " << pid;
    EXPECT_EQ(tid_of(trace, second, pid), kFirstCollectiveLane + 1) << "pid " << pid;
    EXPECT_EQ(tid_of(trace, third, pid), kFirstCollectiveLane + 0) << "pid " << pid;
    EXPECT_EQ(thread_name(trace, pid, 0), "compute");
    EXPECT_EQ(thread_name(trace, pid, kFirstCollectiveLane + 0), "collectives 0");
    EXPECT_EQ(thread_name(trace, pid, kFirstCollectiveLane + 1), "collectives 1");
  }
  EXPECT_EQ(improperly_nested_slices(trace), std::vector<std::string>{});
}

TEST(ChromeTrace, LanesAreGivenInOrderOfStartThenTaskId) {
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId later = add(plan, collective_task({0, 1}));
  TaskId tied_low = add(plan, collective_task({0, 1}));
  TaskId tied_high = add(plan, collective_task({0, 1}));
  // `later` comes first in the plan but starts last: the two that start at 0 take lanes 0 and 1
  // (the lower task id first), and `later` finds neither free at 1.
  Json trace = chrome_trace(plan, cluster, timeline_of({{1, 3}, {0, 2}, {0, 2}}));
  EXPECT_EQ(tid_of(trace, tied_low, 0), kFirstCollectiveLane + 0);
  EXPECT_EQ(tid_of(trace, tied_high, 0), kFirstCollectiveLane + 1);
  EXPECT_EQ(tid_of(trace, later, 0), kFirstCollectiveLane + 2);
  EXPECT_EQ(improperly_nested_slices(trace), std::vector<std::string>{});
}

TEST(ChromeTrace, EachDeviceGetsOnlyTheLanesItsOwnCollectivesNeed) {
  // Devices 0 and 1 share one collective each with device 2 at the same time: device 2 needs two
  // lanes, devices 0 and 1 one each.
  Cluster cluster = gpus(3);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId left = add(plan, collective_task({0, 2}));
  TaskId right = add(plan, collective_task({1, 2}));
  Json trace = chrome_trace(plan, cluster, timeline_of({{0, 2}, {1, 3}}));
  EXPECT_EQ(tid_of(trace, left, 0), kFirstCollectiveLane + 0);
  EXPECT_EQ(tid_of(trace, right, 1), kFirstCollectiveLane + 0);
  EXPECT_EQ(tid_of(trace, left, 2), kFirstCollectiveLane + 0);
  EXPECT_EQ(tid_of(trace, right, 2), kFirstCollectiveLane + 1);
  EXPECT_EQ(thread_name(trace, 0, kFirstCollectiveLane + 1), "");
  EXPECT_EQ(thread_name(trace, 2, kFirstCollectiveLane + 1), "collectives 1");
}

TEST(ChromeTrace, TransfersThatOverlapOnALinkGetExtraLanesAfterTheLinks) {
  Cluster cluster = gpus(2);
  cluster.add_link(0, 1, round_link());
  ExecutionPlan plan = empty_plan(cluster);
  TaskId first = add(plan, transfer_task(0, 1, 1e6));
  TaskId second = add(plan, transfer_task(1, 0, 1e6));
  TaskId third = add(plan, transfer_task(0, 1, 1e6));
  Json trace = chrome_trace(plan, cluster, timeline_of({{0, 2}, {1, 3}, {2.5, 4}}));
  const int64_t network = 2;   // pid after the devices
  const int64_t links = 1;     // lane 0 of link l keeps tid l; further lanes follow the links
  const std::string link_name = thread_name(trace, network, 0);
  EXPECT_EQ(tid_of(trace, first, network), 0);
  EXPECT_EQ(tid_of(trace, second, network), links + 0);
  EXPECT_EQ(tid_of(trace, third, network), 0);
  EXPECT_EQ(thread_name(trace, network, links + 0), link_name + ", lane 1");
  EXPECT_EQ(improperly_nested_slices(trace), std::vector<std::string>{});
}

TEST(ChromeTrace, ADependencyArrowLeavesFromTheCollectivesLane) {
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, collective_task({0, 1}));
  TaskId second = add(plan, collective_task({0, 1}));
  add(plan, testing::compute_task(0, 1e9), {second});
  Json trace = chrome_trace(plan, cluster, timeline_of({{0, 2}, {1, 3}, {3, 4}}));
  int64_t arrows = 0;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") != "s") continue;
    ++arrows;
    EXPECT_EQ(event.at("pid"), 0);
    EXPECT_EQ(event.at("tid"), kFirstCollectiveLane + 1);
    EXPECT_EQ(event.at("ts"), 3e6);
  }
  EXPECT_EQ(arrows, 1);
}

// The bundled 3D run (tensor 8 x pipeline 2 x data 2), simulated: tensor- and data-parallel
// all-reduces overlap on a device, and transfers share links.
TEST(ChromeTrace, EveryRowOfA3dRunsTraceIsProperlyNested) {
  const std::filesystem::path root = PLACESIM_SOURCE_DIR;
  const Scenario scenario =
      load_scenario(root / "scenarios/gpt_3d_parallel_dgx.json", HardwareCatalog(root / "hardware_profiles"));
  const PlannedScenario planned = plan_scenario(scenario);
  const SimulatedRun run = simulate_plan(planned.plan, scenario.cluster);
  const Json trace = chrome_trace(planned.plan, scenario.cluster, run.timeline);
  size_t collective_slices = 0;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "X" && event.at("args").contains("algorithm")) ++collective_slices;
  }
  ASSERT_GT(collective_slices, 0u) << "the scenario should have collectives to check";
  EXPECT_EQ(improperly_nested_slices(trace), std::vector<std::string>{});
}

}  // namespace
}  // namespace placesim
