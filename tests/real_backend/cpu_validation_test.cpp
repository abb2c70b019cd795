// The issue's target, end to end through the command line: on this machine, calibrate the CPU,
// then validate an MLP and a ResNet-50-shaped plan on the CPU backend; each step time must be
// within 15% of the measurement. A data-parallel MLP executes its ring all-reduce between the
// gradients and the updates. Also the backend's error paths: one clear message, exit 2, nothing
// written.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "../cli/run_placesim.h"
#include "sim/session/pipeline.h"
#include "real_backend/calibration.h"
#include "real_backend/runtime/cpu_kernels.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

constexpr int kExitInputError = 2;
constexpr double kMaxStepError = 0.15;  // the issue's target for the CPU

bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

/// Step errors in percent, from validate's "case predicted measured error%" rows.
std::map<std::string, double> step_errors(const std::string& output) {
  std::map<std::string, double> errors;
  std::regex row(R"((cpu_\w+)\s+[0-9.]+\s+[0-9.]+\s+([+-][0-9.]+)%)");
  for (std::sregex_iterator it(output.begin(), output.end(), row), end; it != end; ++it) {
    errors[(*it)[1]] = std::stod((*it)[2]);
  }
  return errors;
}

TEST(CpuValidation, CalibratedMlpAndResnet50StepTimesAreWithin15Percent) {
  const std::filesystem::path profiles = make_temp_directory();
  const std::filesystem::path mlp = std::filesystem::path(PLACESIM_SOURCE_DIR) / "real_backend/scenarios/cpu_mlp.json";
  const std::filesystem::path resnet =
      std::filesystem::path(PLACESIM_SOURCE_DIR) / "real_backend/scenarios/cpu_resnet50.json";
  std::string outputs;
  std::string last_attempt;
  std::map<std::string, double> errors;
  // Two attempts: a burst of load from outside this test (another process on these cores) can
  // spoil one calibration or one measurement; the second attempt recalibrates from scratch.
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto calibrated = run_placesim({"calibrate", "--backend", "cpu", "-o", (profiles / "measured-cpu.json").string()});
    ASSERT_EQ(calibrated.exit_status, 0) << calibrated.output;
    EXPECT_TRUE(std::filesystem::is_regular_file(profiles / "devices/measured-cpu.json"));
    EXPECT_TRUE(std::filesystem::is_regular_file(profiles / "clusters/measured-cpu.json"));
    auto validated = run_placesim({"--profiles", profiles.string(), "validate", "--backend", "cpu", "--runs", "15",
                                   mlp.string(), resnet.string()});
    ASSERT_EQ(validated.exit_status, 0) << validated.output;
    last_attempt = calibrated.output + validated.output;
    outputs += "attempt " + std::to_string(attempt) + ":\n" + last_attempt;
    EXPECT_TRUE(std::regex_search(validated.output, std::regex(R"(MAPE: [0-9]+\.[0-9]% over 2 cases)")))
        << validated.output;
    errors = step_errors(validated.output);
    ASSERT_EQ(errors.size(), 2u) << validated.output;
    if (std::abs(errors["cpu_mlp"]) <= 100 * kMaxStepError && std::abs(errors["cpu_resnet50"]) <= 100 * kMaxStepError) {
      break;
    }
  }
  std::cout << outputs;
  const bool within = std::abs(errors["cpu_mlp"]) <= 100 * kMaxStepError &&
                      std::abs(errors["cpu_resnet50"]) <= 100 * kMaxStepError;
  const bool disturbed = mentions(last_attempt, "warning: this machine was busy") ||
                         mentions(last_attempt, "warning: this machine ran at other rates") ||
                         mentions(last_attempt, "warning: this machine's speed changed during calibration");
  if (!within && disturbed) {
    // Other processes oversubscribed the cores, or the machine's own kernel rates moved away from
    // the calibration's (other virtual machines on the host): the bound cannot be judged.
    std::filesystem::remove_all(profiles);
    GTEST_SKIP() << "machine busy or its speed changed during the last attempt (see placesim's warnings):\n" << outputs;
  }
  EXPECT_LE(std::abs(errors["cpu_mlp"]), 100 * kMaxStepError) << outputs;
  EXPECT_LE(std::abs(errors["cpu_resnet50"]), 100 * kMaxStepError) << outputs;
  std::filesystem::remove_all(profiles);
}

TEST(CpuValidation, ExecuteWritesAMeasuredReportAndTraceLikeRun) {
  const std::filesystem::path parent = make_temp_directory();
  // docs/real-backend.md's first command calibrates into a directory that does not exist yet.
  const std::filesystem::path profiles = parent / "measured";
  auto calibrated =
      run_placesim({"calibrate", "--quick", "-o", (profiles / "measured-cpu.json").string()});
  ASSERT_EQ(calibrated.exit_status, 0) << calibrated.output;
  EXPECT_TRUE(mentions(calibrated.output, "created the directory")) << calibrated.output;
  const std::string report = (profiles / "measured.json").string();
  const std::string trace = (profiles / "trace.json").string();
  auto executed = run_placesim({"--profiles", profiles.string(), "execute", "real_backend/scenarios/cpu_mlp.json",
                                "--backend", "cpu", "--runs", "3", "--report", report, "--trace", trace});
  ASSERT_EQ(executed.exit_status, 0) << executed.output;
  EXPECT_TRUE(mentions(executed.output, "measured/cpu")) << executed.output;
  // The median of the runs is a measurement, and says so (issue 24).
  EXPECT_TRUE(mentions(executed.output, "Measured step time: ")) << executed.output;
  EXPECT_FALSE(mentions(executed.output, "Predicted step time")) << executed.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(trace));
  auto predicted = run_placesim({"--profiles", profiles.string(), "run", "-q", "real_backend/scenarios/cpu_mlp.json",
                                 "--report", (profiles / "predicted.json").string()});
  ASSERT_EQ(predicted.exit_status, 0) << predicted.output;
  auto compared = run_placesim({"compare", (profiles / "predicted.json").string(), report, "-o",
                                (profiles / "comparison.json").string()});
  ASSERT_EQ(compared.exit_status, 0) << compared.output;
  EXPECT_TRUE(mentions(compared.output, "Step time: predicted")) << compared.output;
  EXPECT_TRUE(mentions(compared.output, "Worst tasks by absolute error")) << compared.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(profiles / "comparison.json"));
  EXPECT_TRUE(std::filesystem::is_regular_file(profiles / "comparison.csv"));
  std::filesystem::remove_all(parent);
}

TEST(CpuValidation, ExecuteRunsThePlanOnTheClusterItsStrategyWasPlannedOn) {
  // The first strategy brings its own cluster: the plan's device ids index that cluster, not the
  // scenario's (issue 22: execute used to pair the plan with the scenario's laptop cluster and
  // report the laptop's i7 and GTX 850M profiles for a plan built on this machine's CPUs).
  const std::filesystem::path profiles = make_temp_directory();
  auto calibrated = run_placesim({"calibrate", "--quick", "-o", (profiles / "measured-cpu.json").string()});
  ASSERT_EQ(calibrated.exit_status, 0) << calibrated.output;
  const std::filesystem::path scenario = profiles / "own_cluster.json";
  std::ofstream(scenario) << R"({
    "name": "own_cluster",
    "model": {"zoo": "mlp", "parameters": {"input": 64, "hidden": [64], "output": 10}},
    "cluster": {"template": "laptop_gtx850m"},
    "strategies": [{"name": "on this machine", "cluster": {"template": "measured-cpu"}}],
    "run": {"mode": "training", "batch_size": 8, "steps": 1, "precision": "fp32", "optimizer": "sgd"}
  })";
  auto executed = run_placesim({"--profiles", profiles.string(), "execute", scenario.string(), "--backend", "cpu",
                                "--runs", "1", "--warmup", "0", "-q", "--report", "-"});
  ASSERT_EQ(executed.exit_status, 0) << executed.output;
  EXPECT_TRUE(mentions(executed.output, R"("profile": "measured-cpu")")) << executed.output;
  EXPECT_FALSE(mentions(executed.output, "i7-4710hq")) << executed.output;
  EXPECT_FALSE(mentions(executed.output, "gtx-850m")) << executed.output;
  std::filesystem::remove_all(profiles);
}

/// A bundled CPU scenario calibrated for and executed on this machine: its plan and the measured
/// start and end of each task (`placesim execute --report`).
struct ExecutedScenario {
  PlannedScenario planned;
  Json tasks;
  double start(TaskId id) const { return tasks.at(id).at("start_seconds").get<double>(); }
  double end(TaskId id) const { return tasks.at(id).at("end_seconds").get<double>(); }
};

/// Calibrates into a temporary profiles directory, executes `scenario` (relative to the source
/// tree) with `runs` timed runs and reads back its plan and measured tasks; the directory is
/// removed after.
void execute_bundled(const std::string& scenario, const std::string& runs, ExecutedScenario* result) {
  const std::filesystem::path profiles = make_temp_directory();
  auto calibrated = run_placesim({"calibrate", "--quick", "-o", (profiles / "measured-cpu.json").string()});
  ASSERT_EQ(calibrated.exit_status, 0) << calibrated.output;
  const std::string report = (profiles / "measured.json").string();
  auto executed = run_placesim({"--profiles", profiles.string(), "execute", scenario, "--backend", "cpu", "-q",
                                "--warmup", "1", "--runs", runs, "--report", report});
  ASSERT_EQ(executed.exit_status, 0) << executed.output;
  HardwareCatalog catalog(profiles);
  result->planned = plan_scenario(load_scenario(std::string(PLACESIM_SOURCE_DIR) + "/" + scenario, catalog));
  result->tasks = parse_json_file(report).at("tasks");
  std::filesystem::remove_all(profiles);
  ASSERT_EQ(result->tasks.size(), result->planned.plan.tasks.size());
}

TEST(CpuValidation, DataParallelMlpRunsItsAllReduceAfterTheGradientsAndBeforeTheUpdates) {
  if (real::usable_cpus() < 2) GTEST_SKIP() << "the scenario has two replicas, one core each";
  ExecutedScenario run;
  execute_bundled("real_backend/scenarios/cpu_mlp_data_parallel.json", "3", &run);
  if (HasFatalFailure()) return;
  const ExecutionPlan& plan = run.planned.plan;
  const auto successors = plan.successors();
  size_t collectives = 0;
  for (const Task& task : plan.tasks) {
    EXPECT_LE(run.start(task.id), run.end(task.id)) << task.name;
    for (TaskId dep : task.deps) EXPECT_GE(run.start(task.id), run.end(dep)) << task.name << " after " << plan.tasks[dep].name;
    if (task.kind != TaskKind::kCollective) continue;
    ++collectives;
    EXPECT_EQ(task.group.size(), 2u) << task.name;
    EXPECT_EQ(task.algorithm, CollectiveAlgorithm::kRing) << task.name;
    EXPECT_GT(run.end(task.id), run.start(task.id)) << task.name << " moved and added its bytes";
    EXPECT_FALSE(task.deps.empty()) << task.name;
    EXPECT_FALSE(successors[task.id].empty()) << task.name;
  }
  EXPECT_GE(collectives, 1u);
}

// Expert parallelism on this machine: the bundled tiny Mixtral's all-to-alls (each MoE layer's
// dispatch and combine, forward and backward) run on the CPU backend between the two cores, each
// after its deps and before its successors, and take time; so do the dense gradients' all-reduces.
TEST(CpuValidation, ExpertParallelMixtralRunsItsAllToAllsBetweenTheCores) {
  if (real::usable_cpus() < 2) GTEST_SKIP() << "the scenario has two devices, one core each";
  ExecutedScenario run;
  execute_bundled("real_backend/scenarios/cpu_mixtral_tiny_expert_parallel.json", "1", &run);
  if (HasFatalFailure()) return;
  const ExecutionPlan& plan = run.planned.plan;
  std::map<CollectiveKind, size_t> collectives;
  for (const Task& task : plan.tasks) {
    for (TaskId dep : task.deps) EXPECT_GE(run.start(task.id), run.end(dep)) << task.name << " after " << plan.tasks[dep].name;
    if (task.kind != TaskKind::kCollective) continue;
    ++collectives[task.collective];
    EXPECT_EQ(task.group.size(), 2u) << task.name;
    EXPECT_GT(run.end(task.id), run.start(task.id)) << task.name << " moved its bytes";
  }
  // 2 MoE layers x (dispatch + combine) x (forward + backward) per replica group.
  EXPECT_EQ(collectives[CollectiveKind::kAllToAll], 8u);
  EXPECT_GE(collectives[CollectiveKind::kAllReduce], 1u);
}

TEST(CpuValidation, PlansAndBackendsThisMachineLacksFailWithStatus2AndWriteNothing) {
  const std::filesystem::path outputs = make_temp_directory();
  const std::string report = (outputs / "r.json").string();
  // The seed scenario's add runs on a GPU: the cpu backend does not have one.
  auto on_gpu = run_placesim({"execute", "scenarios/seed_device_placement.json", "--backend", "cpu", "--report", report});
  EXPECT_EQ(on_gpu.exit_status, kExitInputError) << on_gpu.output;
  EXPECT_TRUE(mentions(on_gpu.output, "error: ")) << on_gpu.output;
  EXPECT_TRUE(mentions(on_gpu.output, "GPU")) << on_gpu.output;
  EXPECT_FALSE(std::filesystem::exists(report));
  // --backend cuda on a machine (or build) without a GPU; skipped where a GPU exists.
  auto cuda = run_placesim({"execute", "scenarios/seed_device_placement.json", "--backend", "cuda", "--report", report});
  if (cuda.exit_status != 0) {
    EXPECT_EQ(cuda.exit_status, kExitInputError) << cuda.output;
    EXPECT_TRUE(mentions(cuda.output, "error: --backend cuda: ")) << cuda.output;
    EXPECT_FALSE(std::filesystem::exists(report));
  }
  // A missing directory is created (ExecuteWritesAMeasuredReportAndTraceLikeRun); a file where the
  // directory should be is refused before measuring.
  std::ofstream(outputs / "a_file") << "not a directory\n";
  auto calibrate_nowhere = run_placesim({"calibrate", "-o", (outputs / "a_file/x.json").string()});
  EXPECT_EQ(calibrate_nowhere.exit_status, kExitInputError) << calibrate_nowhere.output;
  EXPECT_TRUE(mentions(calibrate_nowhere.output, "is not a directory and cannot be created")) << calibrate_nowhere.output;
  std::filesystem::remove_all(outputs);
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

// validate_gpu.sh cannot run here, but its scenarios must load against what
// `calibrate --backend cuda` writes: build that profile directory from made-up measurements.
TEST(GpuValidationScenarios, LoadAgainstACudaCalibrationsProfileDirectory) {
  real::CudaMeasurements gpu;  // test numbers, not a measurement
  gpu.name = "Test GPU";
  gpu.compute_capability = "9.0";
  gpu.memory_bytes = 80e9;
  gpu.sgemm_flops_per_second = 5e13;
  gpu.sgemm_typical_flops_per_second = 4e13;
  gpu.stream_bytes_per_second = 3e12;
  gpu.launch_overhead_seconds = 1e-5;
  gpu.host_to_device_bytes_per_second = 5e10;
  gpu.host_to_device_latency_seconds = 5e-6;
  gpu.device_count = 1;
  real::CpuMeasurements host;
  host.date = "2000-01-01";
  host.cpu_name = "Test CPU";
  host.physical_memory_bytes = 1e11;
  host.sgemm = {{64, 1e11}, {128, 1.2e11}};
  host.sgemm_best_flops_per_second = 1.2e11;
  host.sgemm_median_flops_per_second = 1.1e11;
  host.arithmetic_flops_per_second = 2e10;
  host.stream_bytes_per_second = 1e10;
  host.dispatch_overhead_seconds = 1e-6;
  host.copies = {{4096, 1e-6}, {1e6, 1e-4}};
  host.copy_bytes_per_second = 1e10;
  const std::filesystem::path profiles = make_temp_directory();
  real::write_profile_directory(profiles / "measured-gpu.json", real::cuda_profiles(gpu, host, "measured-gpu"),
                                {{"measured-gpu-host", real::cpu_profiles(host, "measured-gpu-host").device}},
                                std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  for (const char* scenario : {"gpu_seed", "gpu_mlp", "gpu_resnet50", "gpu_two_stream_split"}) {
    auto checked = run_placesim({"--profiles", profiles.string(), "check",
                                 std::string("real_backend/scenarios/") + scenario + ".json"});
    EXPECT_EQ(checked.exit_status, 0) << checked.output;
  }
  auto cluster = run_placesim({"--profiles", profiles.string(), "check", (profiles / "measured-gpu.json").string()});
  EXPECT_EQ(cluster.exit_status, 0) << cluster.output;
  std::filesystem::remove_all(profiles);
}

}  // namespace
}  // namespace placesim
