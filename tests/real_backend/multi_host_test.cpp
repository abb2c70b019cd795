// Runs under mpirun: the multi-host CPU executor (one MPI rank per host, docs/real-backend.md), and
// the sweep over MPI ranks (docs/capacity-planning.md). For the executor: a model-parallel MLP
// split over two hosts runs under `mpirun -np 2` on loopback, and rank 0's merged timeline keeps
// the plan's order; without mpirun the plan is refused with the command to run. Collectives over
// both hosts: each algorithm leaves the elementwise sum on every device of both hosts (this test
// binary reruns itself under mpirun), and a data-parallel MLP's all-reduce sits between the
// gradients and the updates on the merged timeline. The mpirun tests skip when Open MPI's mpirun
// is absent or placesim was built without MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "../cli/run_placesim.h"
#include "tests/support/test_support.h"
#include "sim/session/pipeline.h"
#include "real_backend/cuda/cuda_executor.h"
#include "real_backend/executor_factory.h"
#include "real_backend/hosts/host_group.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

const std::string kScenario = "real_backend/scenarios/cpu_mlp_two_hosts.json";

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

/// The environment every mpirun here runs under: as root in containers, two ranks on however
/// many cores, no cross-memory attach (containers often forbid the ptrace it needs), and no
/// leak report (Open MPI does not free everything at exit).
const std::string kMpirunEnvironment =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1"
    " ASAN_OPTIONS=detect_leaks=0 OMPI_MCA_btl_vader_single_copy_mechanism=none";

struct MpirunResult {
  int status = 0;
  std::string log;  ///< everything both ranks printed
};

/// `mpirun -np 2 PROGRAM ARGUMENTS` from the source directory, killed after `timeout_seconds`.
MpirunResult run_mpirun(const std::string& program_and_arguments, int timeout_seconds = 120) {
  const std::filesystem::path log = testing::make_temp_directory() / "log.txt";
  std::string command = "cd " + testing::shell_quote(PLACESIM_SOURCE_DIR) + " && " + kMpirunEnvironment + " timeout " +
                        std::to_string(timeout_seconds) + " mpirun -np 2 " + program_and_arguments + " > " +
                        testing::shell_quote(log.string()) + " 2>&1";
  MpirunResult result;
  result.status = std::system(command.c_str());
  result.log = read_file(log);
  std::filesystem::remove_all(log.parent_path());
  return result;
}

/// Runs this test binary's `test` (SUITE.NAME) under `mpirun -np 2` and expects both ranks to
/// pass it.
void rerun_under_mpirun(const std::string& test) {
  auto [status, log] = run_mpirun(testing::shell_quote(std::filesystem::read_symlink("/proc/self/exe").string()) +
                                  " --gtest_color=no --gtest_filter=" + test);
  EXPECT_EQ(status, 0) << log;
  size_t passed = 0;
  for (size_t at = log.find("[       OK ] " + test); at != std::string::npos; at = log.find("[       OK ] " + test, at + 1)) {
    ++passed;
  }
  EXPECT_EQ(passed, 2u) << "both ranks ran " << test << ":\n" << log;
}

TEST(MultiHost, TwoHostPlanWithoutMpirunIsRefusedWithTheCommandToRun) {
  testing::CommandResult result = testing::run_placesim({"execute", kScenario, "--backend", "cpu", "-q"});
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_NE(result.output.find("spans 2 hosts"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("Backtrace"), std::string::npos) << result.output;
}

TEST(MultiHost, MpirunWithTwoRanksExecutesEachHostsPartAndMergesTheTimelineOnRankZero) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
  testing::CommandResult probe = testing::run_placesim({"execute", kScenario, "--backend", "cpu", "-q"});
  if (probe.output.find("built without MPI") != std::string::npos) GTEST_SKIP() << "placesim built without MPI";

  std::filesystem::path directory = testing::make_temp_directory();
  std::filesystem::path report = directory / "measured.json";
  auto [status, log] = run_mpirun(testing::shell_quote(PLACESIM_BINARY) + " execute " + kScenario +
                                  " --backend cpu -q --warmup 1 --runs 3 --report " + testing::shell_quote(report.string()));
  ASSERT_EQ(status, 0) << log;
  ASSERT_TRUE(std::filesystem::exists(report)) << log;

  // The plan the ranks ran, for its dependencies.
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  Scenario scenario = load_scenario(std::string(PLACESIM_SOURCE_DIR) + "/" + kScenario, catalog);
  PlannedScenario planned = plan_scenario(scenario);
  Json measured = parse_json_file(report.string());
  const Json& tasks = measured.at("tasks");
  ASSERT_EQ(tasks.size(), planned.plan.tasks.size());
  int cross_host_transfers = 0;
  for (const Task& task : planned.plan.tasks) {
    const Json& interval = tasks.at(task.id);
    const double start = interval.at("start_seconds"), end = interval.at("end_seconds");
    EXPECT_GE(start, 0.0) << task.name;
    for (TaskId dep : task.deps) {
      // Every dependency is checked on one host's clock: a successor runs where its dep ended
      // (a received transfer's successors on the receiver, a sent one's deps on the sender).
      EXPECT_GE(start, tasks.at(dep).at("end_seconds").get<double>() - 1e-9) << task.name << " after "
                                                                           << planned.plan.tasks[dep].name;
    }
    const bool crosses = task.kind == TaskKind::kTransfer &&
                         scenario.cluster.device(task.source).node != scenario.cluster.device(task.device).node;
    if (crosses) {
      ++cross_host_transfers;
      // Sent on one host, received on the other: the clocks differ by the barrier's skew, which
      // on a loaded 2-core machine (a rank descheduled just after the barrier) reached 3 ms.
      EXPECT_GT(end, start - 10e-3) << task.name;
    } else {
      EXPECT_GE(end, start) << task.name;
    }
  }
  EXPECT_EQ(cross_host_transfers, 3);  // activation forward, its gradient back, the labels
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

/// Two hosts (task:0, task:1) of two CPU devices each: devices 0, 1 on task:0 and 2, 3 on task:1.
Cluster two_hosts_of_two_cpus() {
  Cluster cluster;
  cluster.name = "test";
  DeviceSpec spec = testing::round_gpu(1e11, 1e10);
  spec.id = "test-cpu";
  spec.kind = DeviceKind::kCpu;
  for (int host = 0; host < 2; ++host) {
    for (int index = 0; index < 2; ++index) {
      ClusterDevice device;
      device.name = DeviceName{"worker", 0, host, DeviceKind::kCpu, index};
      device.spec = spec;
      device.node = host;
      cluster.add_device(device, "task:" + std::to_string(host) + "/CPU:" + std::to_string(index));
    }
  }
  return cluster;
}

// Under mpirun (2 ranks): one all-reduce per algorithm over the four devices, chained, each after
// a compute task on each host. Member m's element e starts as 2^m (1 + e mod 5) + salt; after
// the collective every member on this host holds (2^4 - 1)(1 + e mod 5) + 4 salt. Outside mpirun
// the test reruns this binary under `mpirun -np 2` with itself as the filter.
/// Two hosts of one GPU each. On one machine under mpirun both ranks are "hosts": with two GPUs
/// here, host h uses GPU h; with one, both use GPU 0 (the transfers still cross ranks).
Cluster two_hosts_of_one_gpu(int gpus_here) {
  Cluster cluster;
  cluster.name = "test";
  for (int host = 0; host < 2; ++host) {
    ClusterDevice device;
    device.name = DeviceName{"worker", 0, host, DeviceKind::kGpu, gpus_here >= 2 ? host : 0};
    device.spec = testing::round_gpu();
    device.node = host;
    cluster.add_device(device, "task:" + std::to_string(host) + "/GPU:" + std::to_string(*device.name.index));
  }
  return cluster;
}

// The CUDA executor over two ranks (needs a CUDA GPU, mpirun and MPI; skips otherwise, as on
// every machine this project has had so far but the one-GPU H200): a GEMM on host 0, 8 MiB
// staged to host 1 through pinned memory and MPI, a GEMM there, 0 bytes back (a message all the
// same), and with two GPUs and NCCL an all-reduce over both hosts' GPUs on communicators
// bootstrapped over MPI. Rank 0's merged timeline keeps the plan's order.
TEST(MultiHost, CudaExecutorStagesTransfersAndAllReducesAcrossTwoRanks) {
  int gpus_here = 0;
  try {
    gpus_here = real::require_cuda_devices();
  } catch (const InputError& error) {
    GTEST_SKIP() << "no usable CUDA GPU: " << error.what();
  }
  if (!real::launched_by_mpirun()) {
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
    if (!real::built_with_mpi()) GTEST_SKIP() << "built without MPI";
    rerun_under_mpirun("MultiHost.CudaExecutorStagesTransfersAndAllReducesAcrossTwoRanks");
    return;
  }
  const Cluster cluster = two_hosts_of_one_gpu(gpus_here);
  ExecutionPlan plan = testing::empty_plan(cluster);
  TaskId first = testing::add(plan, testing::compute_task(0, 2e10, 1e6, OpKind::kMatMul));
  TaskId forward = testing::add(plan, testing::transfer_task(0, 1, 8.0 * (1 << 20)), {first});
  TaskId second = testing::add(plan, testing::compute_task(1, 2e10, 1e6, OpKind::kMatMul), {forward});
  TaskId back = testing::add(plan, testing::transfer_task(1, 0, 0), {second});
  TaskId last = testing::add(plan, testing::compute_task(0, 2e10, 1e6, OpKind::kMatMul), {back});
  bool allreduce = false;
#ifdef PLACESIM_WITH_NCCL
  if (gpus_here >= 2) {
    Task task;
    task.kind = TaskKind::kCollective;
    task.phase = Phase::kCollective;
    task.name = "allreduce";
    task.group = {0, 1};
    task.device = 0;
    task.algorithm = CollectiveAlgorithm::kRing;
    task.bytes = 64e6;
    testing::add(plan, task, {last, second});
    allreduce = true;
  }
#endif
  real::ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  Timeline timeline = real::make_executor(real::Backend::kCuda, options)->simulate(plan, cluster);
  if (real::host_group()->rank() != 0) return;
  for (const Task& task : plan.tasks) {  // one clock per rank: allow the barrier's skew
    EXPECT_GE(timeline.tasks[task.id].end_seconds, timeline.tasks[task.id].start_seconds - 10e-3) << task.name;
    for (TaskId dep : task.deps) {
      EXPECT_GE(timeline.tasks[task.id].start_seconds, timeline.tasks[dep].end_seconds - 10e-3) << task.name;
    }
  }
  EXPECT_GT(timeline.tasks[forward].end_seconds, timeline.tasks[first].end_seconds) << "8 MiB took some time";
  EXPECT_GT(timeline.tasks[last].end_seconds, timeline.tasks[second].end_seconds);
  std::cout << "CUDA over two ranks: step " << timeline.makespan_seconds() * 1e3 << " ms, 8 MiB transfer "
            << (timeline.tasks[forward].end_seconds - timeline.tasks[forward].start_seconds) * 1e3 << " ms"
            << (allreduce ? ", with the all-reduce" : ", no all-reduce (one GPU, or no NCCL)") << "\n";
}

TEST(MultiHost, CollectivesOverTwoHostsLeaveTheSumOnEveryDeviceOfBoth) {
  if (!real::launched_by_mpirun()) {
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
    if (!real::built_with_mpi()) GTEST_SKIP() << "built without MPI";
    rerun_under_mpirun("MultiHost.CollectivesOverTwoHostsLeaveTheSumOnEveryDeviceOfBoth");
    return;
  }
  const Cluster cluster = two_hosts_of_two_cpus();
  const size_t members = 4;
  const double bytes = 4.0 * 100003;  // a prime count of floats: uneven chunks
  ExecutionPlan plan = testing::empty_plan(cluster);
  std::map<TaskId, float> salt;
  std::optional<TaskId> previous;
  for (CollectiveAlgorithm algorithm : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kDoubleBinaryTree,
                                        CollectiveAlgorithm::kHalvingDoubling, CollectiveAlgorithm::kHierarchical}) {
    std::vector<TaskId> deps = {testing::add(plan, testing::compute_task(0, 0, 1e6, OpKind::kElementwise)),
                                testing::add(plan, testing::compute_task(2, 0, 1e6, OpKind::kElementwise))};
    if (previous) deps.push_back(*previous);
    Task task;
    task.kind = TaskKind::kCollective;
    task.phase = Phase::kCollective;
    task.name = "allreduce/" + to_string(algorithm);
    task.group = {0, 1, 2, 3};
    task.device = 0;
    task.algorithm = algorithm;
    task.bytes = bytes;
    previous = testing::add(plan, task, deps);
    salt[*previous] = static_cast<float>(salt.size()) - 1.5f;
  }
  testing::add(plan, testing::compute_task(0, 0, 1e6, OpKind::kElementwise), {*previous});
  testing::add(plan, testing::compute_task(2, 0, 1e6, OpKind::kElementwise), {*previous});

  auto start_value = [&](TaskId id, size_t member, size_t e) {
    return std::ldexp(1.0f, static_cast<int>(member)) * static_cast<float>(1 + e % 5) + salt.at(id);
  };
  auto sum = [&](TaskId id, size_t e) {
    return (std::ldexp(1.0f, static_cast<int>(members)) - 1) * static_cast<float>(1 + e % 5) +
           static_cast<float>(members) * salt.at(id);
  };
  std::map<TaskId, size_t> filled, read, wrong;
  real::ExecutionOptions options;
  options.warmup_runs = 1;
  options.timed_runs = 3;
  options.before_collective = [&](const Task& task, size_t member, float* values, size_t count) {
    for (size_t e = 0; e < count; ++e) values[e] = start_value(task.id, member, e);
    ++filled[task.id];
  };
  options.after_collective = [&](const Task& task, size_t, const float* values, size_t count) {
    for (size_t e = 0; e < count; ++e) wrong[task.id] += values[e] != sum(task.id, e);
    ++read[task.id];
  };
  Timeline timeline = real::make_executor(real::Backend::kCpu, options)->simulate(plan, cluster);
  const int runs = options.warmup_runs + options.timed_runs;
  for (const auto& [id, ignored] : salt) {
    EXPECT_EQ(filled[id], 2u * runs) << plan.tasks[id].name << ": two members on each host";
    EXPECT_EQ(read[id], 2u * runs) << plan.tasks[id].name;
    EXPECT_EQ(wrong[id], 0u) << plan.tasks[id].name;
  }
  if (real::host_group()->rank() != 0) return;
  for (const Task& task : plan.tasks) {  // rank 0's merged timeline
    EXPECT_GE(timeline.tasks[task.id].end_seconds, timeline.tasks[task.id].start_seconds - 1e-3) << task.name;
    for (TaskId dep : task.deps) {
      EXPECT_GE(timeline.tasks[task.id].start_seconds, timeline.tasks[dep].end_seconds - 1e-3) << task.name;
    }
  }
}

TEST(MultiHost, MpirunRunsADataParallelAllReduceBetweenTheGradientsAndTheUpdatesOfBothHosts) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
  if (!real::built_with_mpi()) GTEST_SKIP() << "built without MPI";
  const std::string scenario = "real_backend/scenarios/cpu_mlp_data_parallel_two_hosts.json";
  std::filesystem::path directory = testing::make_temp_directory();
  std::filesystem::path report = directory / "measured.json";
  auto [status, log] = run_mpirun(testing::shell_quote(PLACESIM_BINARY) + " execute " + scenario +
                                  " --backend cpu -q --warmup 1 --runs 3 --report " + testing::shell_quote(report.string()));
  ASSERT_EQ(status, 0) << log;

  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  Scenario loaded = load_scenario(std::string(PLACESIM_SOURCE_DIR) + "/" + scenario, catalog);
  PlannedScenario planned = plan_scenario(loaded);
  const Json tasks = parse_json_file(report.string()).at("tasks");
  ASSERT_EQ(tasks.size(), planned.plan.tasks.size());
  size_t collectives = 0;
  for (const Task& task : planned.plan.tasks) {
    const double start = tasks.at(task.id).at("start_seconds"), end = tasks.at(task.id).at("end_seconds");
    // Intervals from two hosts' clocks meet here: they agree up to the barrier's skew.
    EXPECT_GT(end, start - 1e-3) << task.name;
    for (TaskId dep : task.deps) {
      EXPECT_GE(start, tasks.at(dep).at("end_seconds").get<double>() - 1e-3) << task.name << " after "
                                                                            << planned.plan.tasks[dep].name;
    }
    if (task.kind == TaskKind::kCollective) {
      ++collectives;
      EXPECT_NE(loaded.cluster.device(task.group[0]).node, loaded.cluster.device(task.group[1]).node) << task.name;
    }
  }
  EXPECT_GE(collectives, 1u);
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}


/// `mpirun -np 2 placesim sweep SCENARIO -o OUT -q`, from the source directory.
MpirunResult mpirun_sweep(const std::string& scenario, const std::filesystem::path& out) {
  return run_mpirun(testing::shell_quote(PLACESIM_BINARY) + " sweep " + scenario + " -q -o " +
                        testing::shell_quote(out.string()),
                    300);
}

TEST(MultiHost, MpirunSweepWritesTheSameFilesAsOneProcessAndResumesAfterARankDies) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
  testing::CommandResult probe = testing::run_placesim({"execute", kScenario, "--backend", "cpu", "-q"});
  if (probe.output.find("built without MPI") != std::string::npos) GTEST_SKIP() << "placesim built without MPI";
  const std::string scenario = "scenarios/sweep_resnet50_capacity.json";
  std::filesystem::path directory = testing::make_temp_directory();
  testing::CommandResult single = testing::run_placesim({"sweep", scenario, "-q", "-o", (directory / "single").string()});
  ASSERT_EQ(single.exit_status, 0) << single.output;
  MpirunResult ranks = mpirun_sweep(scenario, directory / "ranks");
  ASSERT_EQ(ranks.status, 0) << ranks.log;
  for (const char* file : {"results.csv", "summary.md", "report.html"}) {
    EXPECT_EQ(read_file(directory / "ranks" / file), read_file(directory / "single" / file)) << file;
  }
  // A rank that dies loses nothing rank 0 has recorded: keep the resume file's header and its
  // first 10 rows (as if the job had died then), rerun, and the CSV is the same.
  std::string resume = read_file(directory / "ranks" / "results.jsonl");
  size_t cut = 0;
  for (int line = 0; line < 11; ++line) cut = resume.find('\n', cut) + 1;
  std::filesystem::create_directories(directory / "rerun");
  std::ofstream(directory / "rerun" / "results.jsonl", std::ios::binary) << resume.substr(0, cut);
  MpirunResult rerun = mpirun_sweep(scenario, directory / "rerun");
  ASSERT_EQ(rerun.status, 0) << rerun.log;
  EXPECT_EQ(read_file(directory / "rerun" / "results.csv"), read_file(directory / "single" / "results.csv"));
  // ... and the 10 recorded rows were not evaluated again: as many rows as one uninterrupted run.
  auto lines = [](const std::string& text) { return std::count(text.begin(), text.end(), '\n'); };
  EXPECT_EQ(lines(read_file(directory / "rerun" / "results.jsonl")), lines(resume));
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

/// `placesim sweep` of `sweep_text` under mpirun on 2 ranks writes the files one process writes,
/// with `rows` configurations.
void expect_ranks_write_what_one_process_writes(const std::string& sweep_text, size_t rows) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
  testing::CommandResult probe = testing::run_placesim({"execute", kScenario, "--backend", "cpu", "-q"});
  if (probe.output.find("built without MPI") != std::string::npos) GTEST_SKIP() << "placesim built without MPI";
  std::filesystem::path directory = testing::make_temp_directory();
  const std::filesystem::path scenario = directory / "sweep.json";
  std::ofstream(scenario) << sweep_text;
  testing::CommandResult single =
      testing::run_placesim({"sweep", scenario.string(), "-q", "-o", (directory / "single").string()});
  ASSERT_EQ(single.exit_status, 0) << single.output;
  MpirunResult ranks = mpirun_sweep(testing::shell_quote(scenario.string()), directory / "ranks");
  ASSERT_EQ(ranks.status, 0) << ranks.log;
  const std::string csv = read_file(directory / "single" / "results.csv");
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + rows);
  for (const char* file : {"results.csv", "summary.md", "report.html"}) {
    EXPECT_EQ(read_file(directory / "ranks" / file), read_file(directory / "single" / file)) << file;
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory, ignored);
}

// 3D configurations that differ only in GPipe or 1F1B go out as one work item (they share one
// micro-batch's cells); the ranks form the same groups from the sweep, so the files match.
TEST(MultiHost, MpirunSweepOfGroupedPipelineSchedulesWritesTheSameFilesAsOneProcess) {
  expect_ranks_write_what_one_process_writes(R"({"name": "pairs",
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1},
    "sweep": {"nodes": [1], "batch_size": [16, 32],
              "strategies": [{"parallelism": {"pipeline": [2, 4], "stage_split": "layers",
                                              "schedule": ["gpipe", "1f1b"]}}]}})",
                                             8);
}

// "fidelity": "search N": one work item per screen key (every node count and schedule of a
// layout), then the best 2 on the analytical tier; the ranks write what one process writes.
TEST(MultiHost, MpirunSearchSweepWritesTheSameFilesAsOneProcess) {
  expect_ranks_write_what_one_process_writes(R"({"name": "search",
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"steps": 1},
    "sweep": {"nodes": [2, 4], "fabric": ["ib_hdr"], "batch_size": [32], "fidelity": "search 2",
              "strategies": [{"parallelism": {"pipeline": [2, 4], "stage_split": "layers",
                                              "schedule": ["gpipe", "1f1b"]}},
                             {"name": "zero3", "parallelism": {"pipeline": 2, "zero": 3}}]}})",
                                             10);
}

}  // namespace
}  // namespace placesim
