// host_roles: each rank's role per task of a two-host plan, the order of cross-host jobs, and
// the merge of the hosts' intervals on rank 0 (hand-made figures).
#include "real_backend/hosts/host_roles.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/test_support.h"

namespace placesim::real {
namespace {

using testing::add;
using testing::compute_task;
using testing::transfer_task;

/// Two hosts of one GPU each: device 0 on task:0, device 1 on task:1.
Cluster two_hosts() {
  Cluster cluster;
  cluster.name = "test";
  for (int host = 0; host < 2; ++host) {
    ClusterDevice device;
    device.name = DeviceName{"worker", 0, host, DeviceKind::kGpu, 0};
    device.spec = testing::round_gpu();
    device.node = host;
    cluster.add_device(device, "task:" + std::to_string(host) + "/GPU:0");
  }
  return cluster;
}

/// compute on host 0 -> transfer to host 1 -> compute on host 1 -> all-reduce over both.
ExecutionPlan pipeline(const Cluster& cluster) {
  ExecutionPlan plan = testing::empty_plan(cluster);
  TaskId first = add(plan, compute_task(0, 1e9));
  TaskId send = add(plan, transfer_task(0, 1, 1e6), {first});
  TaskId second = add(plan, compute_task(1, 1e9), {send});
  Task allreduce;
  allreduce.kind = TaskKind::kCollective;
  allreduce.device = 0;
  allreduce.group = {0, 1};
  allreduce.bytes = 4e6;
  add(plan, allreduce, {first, second});
  return plan;
}

TEST(HostRoles, EachRankRunsItsTasksSendsOrReceivesTheCrossingAndSharesTheAllReduce) {
  const Cluster cluster = two_hosts();
  const ExecutionPlan plan = pipeline(cluster);
  EXPECT_EQ(host_count(cluster, plan), 2);
  EXPECT_EQ(task_roles(plan, cluster, 0),
            (std::vector<Role>{Role::kLocal, Role::kSend, Role::kRemote, Role::kShared}));
  EXPECT_EQ(task_roles(plan, cluster, 1),
            (std::vector<Role>{Role::kRemote, Role::kReceive, Role::kLocal, Role::kShared}));
  EXPECT_EQ(transfer_role(1, 1, 0), Role::kRemote);
  EXPECT_EQ(transfer_role(0, 0, 0), Role::kLocal);
}

TEST(HostRoles, TopologicalPositionsTakeTheLowestReadyIdFirst) {
  const Cluster cluster = two_hosts();
  ExecutionPlan plan = testing::empty_plan(cluster);
  TaskId a = add(plan, compute_task(0, 1));  // 0
  TaskId b = add(plan, compute_task(1, 1), {a});  // 1, after 0
  add(plan, compute_task(0, 1));  // 2, a root
  add(plan, compute_task(1, 1), {b});  // 3, after 1
  // Ready {0, 2}: 0; then {1, 2}: 1; then {2, 3}: 2; then 3.
  EXPECT_EQ(topological_positions(plan), (std::vector<size_t>{0, 1, 2, 3}));
  ExecutionPlan reversed = testing::empty_plan(cluster);
  add(reversed, compute_task(0, 1), {1});  // 0 after 1
  add(reversed, compute_task(0, 1));
  EXPECT_EQ(topological_positions(reversed), (std::vector<size_t>{1, 0}));
}

TEST(HostRoles, RankZeroMergesTransfersFromBothEndsAndSharedCollectivesFromTheLastStartAndFirstEnd) {
  const Cluster cluster = two_hosts();
  const ExecutionPlan plan = pipeline(cluster);
  Timeline host0, host1;
  host0.tasks = {{0.0, 1.0}, {1.0, 1.5}, {0, 0}, {3.0, 4.2}};
  host1.tasks = {{0, 0}, {0.0, 2.0}, {2.0, 3.5}, {3.6, 4.0}};
  std::vector<double> gathered = own_intervals(host0, task_roles(plan, cluster, 0));
  const std::vector<double> theirs = own_intervals(host1, task_roles(plan, cluster, 1));
  EXPECT_TRUE(std::isnan(gathered[2 * 1 + 1])) << "the sender does not know when the bytes landed";
  EXPECT_TRUE(std::isnan(theirs[2 * 1])) << "the receiver does not know when the sender started";
  gathered.insert(gathered.end(), theirs.begin(), theirs.end());
  Timeline merged = host0;
  merge_intervals(merged, gathered, 2, {false, false, false, true});
  EXPECT_EQ(merged.tasks[0].start_seconds, 0.0);
  EXPECT_EQ(merged.tasks[0].end_seconds, 1.0);
  EXPECT_EQ(merged.tasks[1].start_seconds, 1.0) << "sender's start";
  EXPECT_EQ(merged.tasks[1].end_seconds, 2.0) << "receiver's end";
  EXPECT_EQ(merged.tasks[2].start_seconds, 2.0);
  EXPECT_EQ(merged.tasks[2].end_seconds, 3.5);
  EXPECT_EQ(merged.tasks[3].start_seconds, 3.6) << "the last host to start its part";
  EXPECT_EQ(merged.tasks[3].end_seconds, 4.0) << "the first host to have its sums";
}

TEST(HostRoles, OneHostPlanOutsideMpirunNeedsNoGroup) {
  Cluster cluster = testing::gpus(2);
  ExecutionPlan plan = testing::empty_plan(cluster);
  add(plan, transfer_task(0, 1, 1e6), {add(plan, compute_task(0, 1e9))});
  EXPECT_EQ(host_count(cluster, plan), 1);
  if (!launched_by_mpirun()) {
    EXPECT_EQ(checked_host_group(plan, cluster, 2), nullptr);
  }
  EXPECT_EQ(task_roles(plan, cluster, 0), (std::vector<Role>{Role::kLocal, Role::kLocal}));
}

}  // namespace
}  // namespace placesim::real
