// The CPU executor honours the PlanEngine contract (deps, one compute task at a time per device,
// the lowest ready id first however the ready tasks became ready, tasks without work included),
// its kernels do the work they are sized for, and a GEMM task of F FLOPs takes about
// F / (calibrated FLOP/s). Collectives run their schedule's steps on real buffers and leave every
// member with the elementwise sum. Also: per-task medians, and clear errors for plans this machine
// cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tests/support/test_support.h"
#include "real_backend/calibration.h"
#include "real_backend/runtime/cpu_kernels.h"
#include "real_backend/cuda/cuda_executor.h"
#include "real_backend/executor_factory.h"
#include "real_backend/runtime/machine_load.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/input_error.h"
#include "sim/plan/collective_schedule.h"

namespace placesim {
namespace {

using namespace placesim::testing;
using real::Backend;
using real::ExecutionOptions;

/// A CPU with round numbers (the executor uses them only to decide whether a task is
/// compute- or memory-bound): ridge point 10 FLOP per byte.
DeviceSpec round_cpu() {
  DeviceSpec spec = round_gpu(1e11, 1e10);
  spec.id = "test-cpu";
  spec.kind = DeviceKind::kCpu;
  return spec;
}

Cluster cpus(size_t n) {
  Cluster cluster;
  cluster.name = "test";
  for (size_t i = 0; i < n; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kCpu, static_cast<int>(i)};
    device.spec = round_cpu();
    cluster.add_device(device, "CPU:" + std::to_string(i));
  }
  return cluster;
}

/// n CPU devices, every two joined by a link (an all-to-all needs a route between each pair).
Cluster meshed_cpus(size_t n) {
  Cluster cluster = cpus(n);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) cluster.add_link(cluster.device(a).vertex, cluster.device(b).vertex, round_link());
  }
  return cluster;
}

Timeline execute(const ExecutionPlan& plan, const Cluster& cluster, int runs = 3) {
  ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = runs;
  return real::make_executor(Backend::kCpu, options)->simulate(plan, cluster);
}

void expect_contract(const ExecutionPlan& plan, const Timeline& timeline) {
  ASSERT_EQ(timeline.tasks.size(), plan.tasks.size());
  for (const Task& task : plan.tasks) {
    const TaskInterval& interval = timeline.tasks[task.id];
    EXPECT_LE(interval.start_seconds, interval.end_seconds) << task.name;
    for (TaskId dep : task.deps) {
      EXPECT_GE(interval.start_seconds, timeline.tasks[dep].end_seconds) << task.name << " starts before dep " << dep;
    }
    for (const Task& other : plan.tasks) {
      if (other.id <= task.id || other.kind != TaskKind::kCompute || task.kind != TaskKind::kCompute ||
          other.device != task.device) {
        continue;
      }
      const TaskInterval& b = timeline.tasks[other.id];
      bool disjoint = interval.end_seconds <= b.start_seconds || b.end_seconds <= interval.start_seconds;
      EXPECT_TRUE(disjoint) << task.name << " and " << other.name << " overlap on one device";
    }
  }
}

TEST(CpuExecutor, HonoursDependenciesAndRunsOneComputeTaskPerDeviceLowestIdFirst) {
  const size_t devices = std::min<unsigned>(2, real::usable_cpus());
  Cluster cluster = cpus(devices);
  ExecutionPlan plan = empty_plan(cluster);
  const DeviceId last = devices - 1;
  // Three independent 4 MB streams on device 0: all ready at once, they must run 0, 1, 2.
  TaskId a = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
  TaskId b = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
  TaskId c = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
  // A GEMM on the last device (compute-bound: 2e8 FLOPs, 1e5 bytes), a copy of a's output.
  TaskId gemm = add(plan, compute_task(last, 2e8, 1e5, OpKind::kMatMul));
  TaskId copy = devices > 1 ? add(plan, transfer_task(0, last, 8e6), {a}) : a;
  TaskId join = add(plan, compute_task(last, 0, 1e6, OpKind::kElementwise), {copy, gemm, c});
  (void)b;
  (void)join;

  Timeline median = execute(plan, cluster);
  EXPECT_EQ(median.source, "measured/cpu");
  expect_contract(plan, median);
  EXPECT_LE(median.tasks[0].end_seconds, median.tasks[1].start_seconds);
  EXPECT_LE(median.tasks[1].end_seconds, median.tasks[2].start_seconds);
  // Every task did real work.
  for (const Task& task : plan.tasks) EXPECT_GT(median.tasks[task.id].duration(), 0) << task.name;
}

/// How much earlier than a device frees a task must have become ready for a run to show which
/// ready task the executor picks: the thread that made it ready may be descheduled between timing
/// its predecessor's end and reporting it (a 2-vCPU VM shared with builds: milliseconds).
constexpr double kReadyMarginSeconds = 5e-3;
constexpr int kAttempts = 5;

// CPU:0 streams 400 MB (task 0, tens of ms) while the CPU:1 -> CPU:0 copy thread, which runs its
// transfers in the order they became ready, copies 1 and then 2 (4 kB each, microseconds). Task 4
// waits for 1 and task 3 for 2: 4 becomes ready first, then 3, both while 0 runs. When 0 ends the
// device takes the lowest ready id, 3, then 4; a queue in ready order would run 4 first.
TEST(CpuExecutor, RunsTheLowestReadyIdWhenTheDeviceFreesNotTheFirstToBecomeReady) {
  Cluster cluster = cpus(2);  // CPU:1 only sends: it needs no core of its own
  ExecutionPlan plan = empty_plan(cluster);
  const TaskId busy = add(plan, compute_task(0, 0, 4e8, OpKind::kElementwise));
  const TaskId first = add(plan, transfer_task(1, 0, 4e3));
  const TaskId second = add(plan, transfer_task(1, 0, 4e3));
  const TaskId lower = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {second});
  const TaskId higher = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {first});
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const Timeline run = execute(plan, cluster, 1);  // one timed run: its own order, not medians
    expect_contract(plan, run);
    const double both_ready = std::max(run.tasks[first].end_seconds, run.tasks[second].end_seconds);
    if (run.tasks[busy].end_seconds - both_ready < kReadyMarginSeconds) continue;
    EXPECT_GE(run.tasks[lower].start_seconds, run.tasks[busy].end_seconds);
    EXPECT_LE(run.tasks[lower].end_seconds, run.tasks[higher].start_seconds) << "4 ran before the lower ready id 3";
    return;
  }
  GTEST_SKIP() << "in " << kAttempts << " runs the copies never ended " << kReadyMarginSeconds
               << " s before the 400 MB stream: machine too busy to show the order";
}

// Task 2 on CPU:0 needs compute 0 (CPU:0, a 100 kB stream, microseconds) and transfer 1 (CPU:1 ->
// CPU:0, 64 MB, milliseconds); task 3 needs only 0. Task 2 starts after both have ended, however
// early 0 ends; when 0 ends before the copy, 3 is the only ready task on CPU:0 and runs first,
// although 2 has the lower id, and 2 follows both it and the copy.
TEST(CpuExecutor, ATaskWaitsForItsTransferAndComputeDependencies) {
  Cluster cluster = cpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  const TaskId compute = add(plan, compute_task(0, 0, 1e5, OpKind::kElementwise));
  const TaskId copy = add(plan, transfer_task(1, 0, 64e6));
  const TaskId both = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {compute, copy});
  const TaskId after_compute = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {compute});
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const Timeline run = execute(plan, cluster, 1);
    expect_contract(plan, run);
    EXPECT_GE(run.tasks[both].start_seconds, run.tasks[copy].end_seconds);
    EXPECT_GE(run.tasks[both].start_seconds, run.tasks[compute].end_seconds);
    if (run.tasks[copy].end_seconds - run.tasks[compute].end_seconds < kReadyMarginSeconds) continue;
    EXPECT_LE(run.tasks[after_compute].end_seconds, run.tasks[both].start_seconds);
    return;
  }
  GTEST_SKIP() << "in " << kAttempts << " runs the 64 MB copy never ended " << kReadyMarginSeconds
               << " s after the 100 kB stream";
}

// A task without work still takes its device's turn, as in the engines (ReadyTasks): task 1, a
// variable on CPU:0, is ready at the start but waits for task 0, then ends as it starts.
TEST(CpuExecutor, ATaskWithoutWorkWaitsForItsDevice) {
  Cluster cluster = cpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  const TaskId work = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise));
  const TaskId variable = add(plan, compute_task(0, 0, 0, OpKind::kVariable));
  const Timeline run = execute(plan, cluster, 1);
  EXPECT_GE(run.tasks[variable].start_seconds, run.tasks[work].end_seconds);
  EXPECT_EQ(run.tasks[variable].duration(), 0);
}

TEST(CpuExecutor, TasksWithoutWorkFinishAtOnce) {
  Cluster cluster = cpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId variable = add(plan, compute_task(0, 0, 0, OpKind::kVariable));
  TaskId work = add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {variable});
  Timeline timeline = execute(plan, cluster, 1);
  EXPECT_EQ(timeline.tasks[variable].duration(), 0);
  EXPECT_GT(timeline.tasks[work].duration(), 0);
}

TEST(CpuExecutor, MedianTimelineTakesPerTaskMediansAndKeepsOrderings) {
  // Three runs of a two-task chain: medians of starts and ends, task by task.
  std::vector<Timeline> runs(3);
  const double starts[3][2] = {{0, 5}, {0, 3}, {0, 4}};
  const double ends[3][2] = {{5, 9}, {3, 8}, {4, 6}};
  for (int r = 0; r < 3; ++r) {
    runs[r].source = "measured/cpu";
    for (int t = 0; t < 2; ++t) runs[r].tasks.push_back({starts[r][t], ends[r][t]});
  }
  Timeline median = real::median_timeline(runs);
  EXPECT_EQ(median.tasks[0].end_seconds, 4);   // median of 5, 3, 4
  EXPECT_EQ(median.tasks[1].start_seconds, 4); // median of 5, 3, 4: still >= the dep's end
  EXPECT_EQ(median.tasks[1].end_seconds, 8);   // median of 9, 8, 6
  EXPECT_EQ(median.source, "measured/cpu");
}

TEST(CpuKernels, SquareGemmMatchesTheTaskFlops) {
  for (double flops : {1e6, 3.3e7, 2e9, 7.7e10}) {
    real::GemmShape shape = real::square_gemm_for(flops);
    EXPECT_NEAR(shape.flops() / flops, 1.0, 0.01) << flops;
    EXPECT_LE(shape.m, real::kMaxGemmSide);
    EXPECT_EQ(shape.m, shape.n);
  }
  // 2 x 2048^3 = 1.72e10 FLOPs per call at most: 7.7e10 needs 5 calls.
  EXPECT_EQ(real::square_gemm_for(7.7e10).repeats, 5);
}

TEST(CpuKernels, RunsTheBoundingRooflineTerm) {
  Cluster cluster = cpus(1);
  // Ridge point of round_cpu: 1e11 FLOP/s / 1e10 B/s = 10 FLOP per byte.
  Task compute_bound = compute_task(0, 1e9, 1e6, OpKind::kConv);
  Task memory_bound = compute_task(0, 1e6, 1e6, OpKind::kMatMul);
  Task elementwise = compute_task(0, 1e5, 1e6, OpKind::kElementwise);
  Task arithmetic = compute_task(0, 1e9, 1e3, OpKind::kNormalization);
  EXPECT_EQ(real::compute_work(compute_bound, Precision::kFp32, cluster.device(0)).kind, real::WorkKind::kGemm);
  EXPECT_EQ(real::compute_work(memory_bound, Precision::kFp32, cluster.device(0)).kind, real::WorkKind::kStream);
  EXPECT_EQ(real::compute_work(elementwise, Precision::kFp32, cluster.device(0)).kind, real::WorkKind::kStream);
  EXPECT_EQ(real::compute_work(arithmetic, Precision::kFp32, cluster.device(0)).kind, real::WorkKind::kArithmetic);
  EXPECT_EQ(real::compute_work(compute_task(0, 0, 0, OpKind::kVariable), Precision::kFp32, cluster.device(0)).kind,
            real::WorkKind::kNone);
}

TEST(CpuExecutor, GemmTaskTakesItsFlopsOverTheCalibratedRate) {
  // 2 x 500^3 FLOPs: a 500-side square sgemm, inside the quick calibration's sweep (64..512).
  const double flops = 2.5e8;
  // Three attempts, each calibrating and executing back to back: interference /proc/stat cannot
  // see (a neighbour on a shared host taking memory bandwidth or cache, a frequency change) can
  // slow one half of an attempt and not the other. An executor that charges the wrong work fails
  // all three; CI once measured 1.40x in a single attempt with the machine otherwise idle.
  constexpr int kCalibrationAttempts = 3;
  std::string attempts;
  double closest_ratio = 0;
  bool busy = false;
  for (int attempt = 1; attempt <= kCalibrationAttempts; ++attempt) {
    real::MachineLoad load;
    real::CpuMeasurements measured = real::measure_cpu(nullptr, true);
    real::CalibratedProfiles profiles = real::cpu_profiles(measured, "test-measured");
    DeviceSpec spec = read_device_profile(JsonReader(profiles.device, "calibrated"));
    Cluster cluster = cpus(1);
    cluster.devices()[0].spec = spec;
    ExecutionPlan plan = empty_plan(cluster);
    add(plan, compute_task(0, flops, 1e6, OpKind::kMatMul));
    // predicted = F / (peak x matmul efficiency) + dispatch overhead (docs/cost-model.md)
    const double predicted = flops / (spec.peak_for(Precision::kFp32) * spec.efficiency_for(OpKind::kMatMul)) +
                             spec.kernel_launch_overhead_seconds;
    Timeline timeline = execute(plan, cluster, 7);
    const double ratio = timeline.tasks[0].duration() / predicted;
    attempts += "attempt " + std::to_string(attempt) + ": measured " + std::to_string(timeline.tasks[0].duration()) +
                " s, predicted " + std::to_string(predicted) + " s (" + std::to_string(ratio) + "x)\n";
    if (closest_ratio == 0 || std::abs(ratio - 1.0) < std::abs(closest_ratio - 1.0)) closest_ratio = ratio;
    busy = !load.busy_warning().empty();
    if (std::abs(ratio - 1.0) <= 0.15) break;
  }
  if (std::abs(closest_ratio - 1.0) > 0.15 && busy) GTEST_SKIP() << "the machine was busy:\n" << attempts;
  EXPECT_NEAR(closest_ratio, 1.0, 0.15) << attempts;
}

/// A collective over `group` of ceil(bytes / 4) floats: member m's element e starts as
/// 2^m (1 + e mod 5) + `salt`, so the sum is (2^n - 1)(1 + e mod 5) + n salt; a contribution lost,
/// counted twice or taken from another collective's buffer changes it.
struct CollectiveCheck {
  float salt = 0;
  size_t members = 0;
  size_t filled = 0, read = 0, wrong = 0;

  float start(size_t member, size_t e) const {
    return std::ldexp(1.0f, static_cast<int>(member)) * static_cast<float>(1 + e % 5) + salt;
  }
  float sum(size_t e) const {
    return (std::ldexp(1.0f, static_cast<int>(members)) - 1) * static_cast<float>(1 + e % 5) +
           static_cast<float>(members) * salt;
  }
};

/// Options whose hooks fill each collective's buffers and check its sums, per task id.
ExecutionOptions checking_collectives(std::map<TaskId, CollectiveCheck>& checks) {
  ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.before_collective = [&checks](const Task& task, size_t member, float* values, size_t count) {
    CollectiveCheck& check = checks.at(task.id);
    for (size_t e = 0; e < count; ++e) values[e] = check.start(member, e);
    ++check.filled;
  };
  options.after_collective = [&checks](const Task& task, size_t, const float* values, size_t count) {
    CollectiveCheck& check = checks.at(task.id);
    for (size_t e = 0; e < count; ++e) check.wrong += values[e] != check.sum(e);
    ++check.read;
  };
  return options;
}

Task allreduce(std::vector<DeviceId> group, CollectiveAlgorithm algorithm, double bytes) {
  Task task;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kCollective;
  task.group = std::move(group);
  task.device = task.group.front();
  task.algorithm = algorithm;
  task.bytes = bytes;
  return task;
}

TEST(CpuExecutor, CollectivesLeaveTheElementwiseSumOnEveryMemberAfterTheirDeps) {
  // Four CPU devices (the collective needs no core of its own), at most two of them computing.
  const size_t members = 4;
  const DeviceId last = std::min<unsigned>(2, real::usable_cpus()) - 1;
  Cluster cluster = cpus(members);
  const std::vector<DeviceId> group = {0, 1, 2, 3};
  const double bytes = 4.0 * 100003;  // a prime count of floats: uneven chunks
  for (CollectiveAlgorithm algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kDoubleBinaryTree,
                                        CollectiveAlgorithm::kHalvingDoubling, CollectiveAlgorithm::kHierarchical}) {
    SCOPED_TRACE(to_string(algorithm));
    ExecutionPlan plan = empty_plan(cluster);
    // The gradients' producers, an all-reduce after them, a second one running beside it (its
    // own buffers), and an update after the first.
    TaskId gradient0 = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
    TaskId gradient1 = add(plan, compute_task(last, 0, 4e6, OpKind::kElementwise));
    TaskId first = add(plan, allreduce(group, algorithm, bytes), {gradient0, gradient1});
    TaskId second = add(plan, allreduce({3, 2, 1, 0}, algorithm, bytes / 2), {gradient0});
    add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {first});
    std::map<TaskId, CollectiveCheck> checks = {{first, {0.5f, members}}, {second, {-3.0f, members}}};
    ExecutionOptions options = checking_collectives(checks);
    const int runs = options.warmup_runs + options.timed_runs;
    Timeline timeline = real::make_executor(Backend::kCpu, options)->simulate(plan, cluster);
    expect_contract(plan, timeline);
    for (auto& [id, check] : checks) {
      EXPECT_EQ(check.filled, members * runs) << plan.tasks[id].name;
      EXPECT_EQ(check.read, members * runs) << plan.tasks[id].name;
      EXPECT_EQ(check.wrong, 0u) << plan.tasks[id].name;
      EXPECT_GT(timeline.tasks[id].duration(), 0) << plan.tasks[id].name;
    }
  }
}

// A ring reduce-scatter leaves the member at ring position p with part (p + 1) mod n of the sum;
// an all-gather from those parts leaves every member with all of it (collective_chunks).
TEST(CpuExecutor, ReduceScattersAndAllGathersMoveTheirParts) {
  const size_t members = 4;
  Cluster cluster = cpus(members);
  const std::vector<DeviceId> group = {0, 1, 2, 3};
  const size_t elements = 100003;
  const std::vector<DeviceId> ring = topology_ring(group, cluster);
  auto owned_part = [&](size_t member) {
    const size_t p = static_cast<size_t>(std::find(ring.begin(), ring.end(), group[member]) - ring.begin());
    const size_t q = (p + 1) % members;
    return std::make_pair(elements * q / members, elements * (q + 1) / members);
  };
  ExecutionPlan plan = empty_plan(cluster);
  TaskId gradient = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
  Task scatter = allreduce(group, CollectiveAlgorithm::kRing, 4.0 * elements);
  scatter.collective = CollectiveKind::kReduceScatter;
  const TaskId scatter_id = add(plan, scatter, {gradient});
  Task gather = allreduce(group, CollectiveAlgorithm::kRing, 4.0 * elements);
  gather.collective = CollectiveKind::kAllGather;
  const TaskId gather_id = add(plan, gather, {scatter_id});
  const CollectiveCheck values{0.25f, members};
  size_t checked = 0, wrong = 0;
  ExecutionOptions options;
  options.warmup_runs = 0;
  options.timed_runs = 2;
  options.before_collective = [&](const Task& task, size_t member, float* buffer, size_t count) {
    ASSERT_EQ(count, elements);
    const auto [begin, end] = owned_part(member);
    for (size_t e = 0; e < count; ++e) {
      if (task.id == scatter_id) buffer[e] = values.start(member, e);
      if (task.id == gather_id) buffer[e] = e >= begin && e < end ? values.sum(e) : -1.0f;
    }
  };
  options.after_collective = [&](const Task& task, size_t member, const float* buffer, size_t count) {
    const auto [begin, end] = owned_part(member);
    for (size_t e = 0; e < count; ++e) {
      if (task.id == gather_id || (e >= begin && e < end)) wrong += buffer[e] != values.sum(e);
    }
    ++checked;
  };
  Timeline timeline = real::make_executor(Backend::kCpu, options)->simulate(plan, cluster);
  expect_contract(plan, timeline);
  EXPECT_EQ(checked, 2 * members * 2);
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(timeline.tasks[gather_id].duration(), 0);
}

// An all-to-all (expert parallelism's dispatch and combine) leaves member j with part j of every
// member's buffer, member i's in its part i, out of place: 3 members of 100,003 floats each
// round up to 3 parts of 33,335; member m sends m x 1,000,000 + e as element e, so member j's
// received element i x 33,335 + k is i x 1,000,000 + j x 33,335 + k. A second all-to-all over
// the members in another order runs beside it on its own buffers.
TEST(CpuExecutor, AllToAllsLeaveEachMemberEveryMembersPartForIt) {
  const size_t members = 3, part = 33335;
  Cluster cluster = meshed_cpus(members);
  ExecutionPlan plan = empty_plan(cluster);
  const TaskId tokens = add(plan, compute_task(0, 0, 4e6, OpKind::kElementwise));
  Task dispatch = allreduce({0, 1, 2}, CollectiveAlgorithm::kPairwise, 4.0 * 100003);
  dispatch.collective = CollectiveKind::kAllToAll;
  Task combine = dispatch;
  combine.group = {2, 0, 1};
  const TaskId dispatch_id = add(plan, dispatch, {tokens});
  const TaskId combine_id = add(plan, combine, {tokens});
  add(plan, compute_task(0, 0, 1e6, OpKind::kElementwise), {dispatch_id, combine_id});
  size_t filled = 0, read = 0, wrong = 0;
  ExecutionOptions options;
  options.warmup_runs = 0;
  options.timed_runs = 2;
  options.before_collective = [&](const Task&, size_t member, float* buffer, size_t count) {
    ASSERT_EQ(count, members * part);
    for (size_t e = 0; e < count; ++e) buffer[e] = static_cast<float>(member * 1000000 + e);
    ++filled;
  };
  options.after_collective = [&](const Task&, size_t member, const float* buffer, size_t count) {
    ASSERT_EQ(count, members * part);
    for (size_t i = 0; i < members; ++i) {
      for (size_t k = 0; k < part; ++k) {
        wrong += buffer[i * part + k] != static_cast<float>(i * 1000000 + member * part + k);
      }
    }
    ++read;
  };
  Timeline timeline = real::make_executor(Backend::kCpu, options)->simulate(plan, cluster);
  expect_contract(plan, timeline);
  EXPECT_EQ(filled, 2 * members * 2);
  EXPECT_EQ(read, 2 * members * 2);
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(timeline.tasks[dispatch_id].duration(), 0);
  EXPECT_GT(timeline.tasks[combine_id].duration(), 0);
}

TEST(CpuExecutor, RejectsCollectivesItCannotRun) {
  auto executor = real::make_executor(Backend::kCpu, ExecutionOptions{});
  Cluster cluster = cpus(3);
  auto rejected = [&](Task task) -> std::string {
    ExecutionPlan plan = empty_plan(cluster);
    add(plan, compute_task(0, 1e6));
    add(plan, std::move(task), {0});
    try {
      executor->check_plan(plan, cluster);
    } catch (const InputError& error) {
      return error.what();
    }
    return "accepted";
  };
  std::string odd = rejected(allreduce({0, 1, 2}, CollectiveAlgorithm::kHalvingDoubling, 1e6));
  EXPECT_NE(odd.find("/tasks/1"), std::string::npos) << odd;
  EXPECT_NE(odd.find("power-of-two"), std::string::npos) << odd;
  std::string twice = rejected(allreduce({0, 1, 1}, CollectiveAlgorithm::kRing, 1e6));
  EXPECT_NE(twice.find("appears twice"), std::string::npos) << twice;
  Task all_to_all = allreduce({0, 1, 2}, CollectiveAlgorithm::kRing, 1e6);
  all_to_all.collective = CollectiveKind::kAllToAll;
  std::string exchange = rejected(all_to_all);
  EXPECT_NE(exchange.find("an all-to-all runs as pairwise exchanges"), std::string::npos) << exchange;
  all_to_all.algorithm = CollectiveAlgorithm::kPairwise;
  std::string unrouted = rejected(all_to_all);
  EXPECT_NE(unrouted.find("needs a route between every two devices"), std::string::npos) << unrouted;
  Cluster mixed = cpus(1);
  ClusterDevice gpu;
  gpu.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, 0};
  gpu.spec = round_gpu();
  mixed.add_device(gpu, "GPU:0");
  ExecutionPlan on_gpu = empty_plan(mixed);
  add(on_gpu, allreduce({0, 1}, CollectiveAlgorithm::kRing, 1e6));
  EXPECT_THROW(executor->check_plan(on_gpu, mixed), InputError);
}

// Gloo's host-staged halving-doubling moves each machine's sum through its CPU: the backends'
// collectives run among the group's own devices, so such a plan is simulated, not executed.
TEST(CpuExecutor, RefusesHostStagedAllReducesByTheirTask) {
  auto executor = real::make_executor(Backend::kCpu, ExecutionOptions{});
  Cluster cluster = cpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  add(plan, compute_task(0, 1e6));
  add(plan, allreduce({0, 1}, CollectiveAlgorithm::kHostHalvingDoubling, 1e6), {0});
  try {
    executor->simulate(plan, cluster);
    ADD_FAILURE() << "executed a host-staged all-reduce";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/tasks/1/algorithm");
    EXPECT_NE(std::string(error.what()).find("host_halving_doubling"), std::string::npos) << error.what();
  }
}

TEST(CpuExecutor, RejectsPlansThisMachineCannotRun) {
  auto executor = real::make_executor(Backend::kCpu, ExecutionOptions{});
  Cluster gpu_cluster = gpus(1);
  ExecutionPlan on_gpu = empty_plan(gpu_cluster);
  add(on_gpu, compute_task(0, 1e6));
  try {
    executor->check_plan(on_gpu, gpu_cluster);
    FAIL() << "a GPU task was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("GPU"), std::string::npos) << error.what();
  }
  const size_t too_many = real::usable_cpus() + 1;
  Cluster big = cpus(too_many);
  ExecutionPlan wide = empty_plan(big);
  for (DeviceId d = 0; d < too_many; ++d) add(wide, compute_task(d, 1e6));
  EXPECT_THROW(executor->check_plan(wide, big), InputError);
}

TEST(CudaExecutor, RunsAPlanOnAGpuWhenThereIsOne) {
  try {
    real::require_cuda_devices();
  } catch (const InputError& error) {
    GTEST_SKIP() << "no usable CUDA GPU: " << error.what();
  }
  Cluster cluster = gpus(1);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId gemm = add(plan, compute_task(0, 2e10, 1e6, OpKind::kMatMul));
  add(plan, compute_task(0, 0, 1e8, OpKind::kElementwise), {gemm});
  ExecutionOptions options;
  options.timed_runs = 3;
  Timeline timeline = real::make_executor(Backend::kCuda, options)->simulate(plan, cluster);
  EXPECT_EQ(timeline.source, "measured/cuda");
  expect_contract(plan, timeline);
  EXPECT_GT(timeline.tasks[0].duration(), 0);
}

// NCCL all-reduces (needs two GPUs and a build with NCCL): a data-parallel step's shape, two
// gradients, their all-reduce, an update after it; the all-reduce is timed after its deps.
TEST(CudaExecutor, AllReducesWithNcclBetweenTwoGpus) {
#ifndef PLACESIM_WITH_NCCL
  GTEST_SKIP() << "built without NCCL (CMake found no nccl.h and libnccl)";
#else
  int count = 0;
  try {
    count = real::require_cuda_devices();
  } catch (const InputError& error) {
    GTEST_SKIP() << "no usable CUDA GPU: " << error.what();
  }
  if (count < 2) GTEST_SKIP() << "NCCL needs two GPUs; this machine has " << count;
  Cluster cluster = gpus(2);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId gradient0 = add(plan, compute_task(0, 2e10, 1e6, OpKind::kMatMul));
  TaskId gradient1 = add(plan, compute_task(1, 2e10, 1e6, OpKind::kMatMul));
  TaskId reduced = add(plan, allreduce({0, 1}, CollectiveAlgorithm::kRing, 256e6), {gradient0, gradient1});
  // An all-to-all after it (grouped ncclSend/ncclRecv, out of place in the group's buffers).
  Task exchange = allreduce({0, 1}, CollectiveAlgorithm::kPairwise, 64e6);
  exchange.collective = CollectiveKind::kAllToAll;
  TaskId exchanged = add(plan, exchange, {reduced});
  add(plan, compute_task(0, 0, 1e8, OpKind::kElementwise), {exchanged});
  ExecutionOptions options;
  options.timed_runs = 3;
  Timeline timeline = real::make_executor(Backend::kCuda, options)->simulate(plan, cluster);
  expect_contract(plan, timeline);
  EXPECT_GT(timeline.tasks[reduced].duration(), 0);
  EXPECT_GT(timeline.tasks[exchanged].duration(), 0);
#endif
}

}  // namespace
}  // namespace placesim
