// Plans built from placed graphs, simulated, against hand-derived step times; plan files
// round-trip.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/session/pipeline.h"
#include "models/layer_builder.h"
#include "models/zoo.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/analytical/analytical_engine.h"
#include "sim/cost/cost_model.h"
#include "sim/planner/plan_builder.h"
#include "sim/plan/plan_json.h"
#include "sim/scenario/scenario_loader.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace plan_test {  // a unity batch holds several test files
namespace {

using testing::matmul_op;

constexpr double kRelative = 1e-6;

HardwareCatalog catalog() { return HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"); }

// The seed: two 4 MiB tensors copied CPU -> GPU at the same time over one PCIe link (each gets
// half of it), then the add kernel's roofline on the GTX 850M.
TEST(SeedScenario, StepTimeIsTheHandComputedSumOfTransfersAndTheAdd) {
  Scenario scenario = load_scenario(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/seed_device_placement.json",
                                    catalog());
  PlannedScenario planned = plan_scenario(scenario);
  SimulatedRun run = simulate_plan(planned.plan, scenario.cluster);

  const double tensor_bytes = 1024.0 * 1024.0 * 4;  // shape [1024, 1024] of fp32
  Json description = Json::parse(R"({"template": "x"})");
  // The catalog owns the specs: keep it alive while they are used (ASan caught a temporary's).
  const HardwareCatalog profiles = catalog();
  const LinkSpec& pcie = profiles.link("pcie3_x16", JsonReader(description, "t"));
  const double both_copies = pcie.latency_seconds + 2 * tensor_bytes / pcie.bandwidth_bytes_per_second;
  const DeviceSpec& gpu = profiles.device("gtx-850m", JsonReader(description, "t"));
  const double add_elements = 1024.0 * 1024.0;
  const double add = std::max(add_elements / (gpu.peak_for(Precision::kFp32) * gpu.efficiency_for(OpKind::kElementwise)),
                              3 * tensor_bytes / (gpu.memory_bandwidth_bytes_per_second * gpu.memory_efficiency)) +
                     gpu.kernel_launch_overhead_seconds;
  EXPECT_NEAR(run.metrics.step_time_seconds, both_copies + add, (both_copies + add) * kRelative);
  EXPECT_EQ(run.metrics.transfers, 2u);
  EXPECT_DOUBLE_EQ(run.metrics.transferred_bytes, 2 * tensor_bytes);
  // GPU memory at the peak: both copies and the result.
  EXPECT_DOUBLE_EQ(run.metrics.devices[1].peak_memory_bytes, 3 * tensor_bytes);
  // CPU holds the two variables.
  EXPECT_DOUBLE_EQ(run.metrics.devices[0].peak_memory_bytes, 2 * tensor_bytes);
  // The critical path is a copy then the add.
  ASSERT_GE(run.metrics.critical_path.size(), 2u);
  EXPECT_EQ(planned.plan.tasks[run.metrics.critical_path.back().task].name, "fwd/add");
  EXPECT_NEAR(run.metrics.critical_path_transfer_seconds, both_copies, both_copies * kRelative);
}

// Two dense layers split over two GPUs (manual model parallelism): the step is layer 1 forward,
// the activation transfer, layer 2 forward and backward, the gradient transfer back, layer 1
// backward and its update; layer 2's update overlaps with the transfer and layer 1's backward.
TEST(ModelParallel, TwoGpuSplitIsStageComputePlusActivationAndGradientTransfers) {
  Cluster cluster = testing::gpus(2, testing::round_gpu(/*peak=*/1e12, /*bandwidth=*/1e11));
  cluster.add_link(0, 1, testing::round_link(/*bandwidth=*/1e9, /*latency=*/1e-5));
  OpGraph graph;
  const double activation_bytes = 4e8;
  OpId l1 = graph.add_op(matmul_op("dense1", 1e12, 1e6, activation_bytes));
  OpId l2 = graph.add_op(matmul_op("dense2", 0.5e12, 2e6, 1e3));
  graph.add_edge(l1, l2);
  Placement placement{{0, 1}, {}};
  RunOptions run;
  ExecutionPlan plan = build_plan(graph, placement, cluster, run, "split");
  SimulatedRun result = simulate_plan(plan, cluster);

  const double peak = 1e12, memory_bandwidth = 1e11;
  const double transfer = 1e-5 + activation_bytes / 1e9;
  const double sgd1 = std::max(2 * 1e6 / peak, 3 * 4 * 1e6 / memory_bandwidth);  // w -= lr*g: 2 FLOPs, 3 x 4 bytes
  const double sgd2 = std::max(2 * 2e6 / peak, 3 * 4 * 2e6 / memory_bandwidth);
  const double expected = 1e12 / peak + transfer + 0.5e12 / peak + 1e12 / peak + transfer + 2e12 / peak + sgd1;
  ASSERT_LT(sgd2, transfer + 2e12 / peak + sgd1);  // so layer 2's update is off the critical path
  EXPECT_NEAR(result.metrics.step_time_seconds, expected, expected * kRelative);
  EXPECT_EQ(result.metrics.transfers, 2u);
}

TEST(Training, TwoStepsOnOneDeviceTakeTwiceOneStep) {
  Cluster cluster = testing::gpus(1);
  OpGraph graph;
  OpId l1 = graph.add_op(matmul_op("dense1", 1e12, 1e6, 4e6));
  OpId l2 = graph.add_op(matmul_op("dense2", 1e12, 1e6, 4e6));
  graph.add_edge(l1, l2);
  Placement placement{{0, 0}, {}};
  RunOptions run;
  ExecutionPlan one = build_plan(graph, placement, cluster, run, "one");
  run.steps = 2;
  ExecutionPlan two = build_plan(graph, placement, cluster, run, "two");
  double one_step = simulate_plan(one, cluster).metrics.makespan_seconds;
  SimulatedRun both = simulate_plan(two, cluster);
  EXPECT_NEAR(both.metrics.makespan_seconds, 2 * one_step, 2 * one_step * kRelative);
  EXPECT_NEAR(both.metrics.step_time_seconds, one_step, one_step * kRelative);
}

TEST(Training, StaticMemoryCountsParametersGradientsAndOptimizerState) {
  Cluster cluster = testing::gpus(1);
  OpGraph graph;
  graph.add_op(matmul_op("dense", 1e9, 1e6, 4e6));
  Placement placement{{0}, {}};
  RunOptions run;
  run.optimizer = Optimizer::kAdam;
  ExecutionPlan plan = build_plan(graph, placement, cluster, run, "adam");
  // fp32: 4 bytes of weights, 4 of gradients, 8 of Adam moments per parameter.
  EXPECT_DOUBLE_EQ(plan.static_memory[0].total(), 1e6 * (4 + 4 + 8));
}

ExecutionPlan mlp_plan(const Cluster& cluster, std::vector<DeviceId> devices_by_layer) {
  Json parameters = Json::parse(R"({"hidden": [256, 256]})");
  Json name = "mlp";
  OpGraph graph = build_zoo_model(JsonReader(name, "t", "/model/zoo"), JsonReader(parameters, "t"), 32, 4);
  Placement placement;
  for (OpId id = 0; id < graph.size(); ++id) {
    placement.device_of_op.push_back(devices_by_layer[std::min(devices_by_layer.size() - 1, id * devices_by_layer.size() / graph.size())]);
  }
  RunOptions run;
  run.batch_size = 32;
  return build_plan(graph, placement, cluster, run, "mlp");
}

// Backward work exists only on paths from parameters onwards: the input images and labels get
// none, every layer after the first parameter does; every op with parameters gets an update.
TEST(Training, BackwardRunsOnlyWhereGradientsFlowAndEveryParameterOpGetsAnUpdate) {
  Cluster cluster = testing::gpus(1);
  Json parameters = Json::parse(R"({"hidden": [256, 256]})");
  Json name = "mlp";
  OpGraph graph = build_zoo_model(JsonReader(name, "t", "/model/zoo"), JsonReader(parameters, "t"), 32, 4);
  std::vector<OpId> order;
  ASSERT_TRUE(graph.topological_order(&order, nullptr));
  std::vector<bool> downstream_of_parameters(graph.size(), false);
  size_t with_parameters = 0;
  for (OpId v : order) {
    downstream_of_parameters[v] = graph.op(v).parameter_count > 0;
    with_parameters += graph.op(v).parameter_count > 0;
    for (const auto& input : graph.inputs(v)) downstream_of_parameters[v] = downstream_of_parameters[v] || downstream_of_parameters[input.op];
  }
  size_t with_gradient = std::count(downstream_of_parameters.begin(), downstream_of_parameters.end(), true);
  ASSERT_LT(with_gradient, graph.size());  // the input and the labels need none
  ExecutionPlan plan = mlp_plan(cluster, {0});
  size_t forward = 0, backward = 0, updates = 0;
  for (const Task& task : plan.tasks) {
    EXPECT_EQ(task.kind, TaskKind::kCompute);
    forward += task.phase == Phase::kForward;
    backward += task.phase == Phase::kBackward;
    updates += task.phase == Phase::kOptimizer;
    for (TaskId dep : task.deps) EXPECT_LT(dep, task.id);  // plans are emitted in dependency order
  }
  EXPECT_EQ(forward, graph.size());
  EXPECT_EQ(backward, with_gradient);
  EXPECT_EQ(updates, with_parameters);
}

TEST(Inference, StepsRunOneAfterAnother) {
  Cluster cluster = testing::gpus(2);
  cluster.add_link(0, 1, testing::round_link(1e9, 1e-5));
  OpGraph graph;
  OpId l1 = graph.add_op(matmul_op("dense1", 1e12, 0, 1e8));
  OpId l2 = graph.add_op(matmul_op("dense2", 1e12, 0, 1e3));
  graph.add_edge(l1, l2);
  Placement placement{{0, 1}, {}};
  RunOptions run;
  run.kind = StepKind::kInference;
  run.steps = 3;
  ExecutionPlan plan = build_plan(graph, placement, cluster, run, "inference");
  // Without a barrier, GPU:0 would start step 2 while GPU:1 still works on step 1.
  const double one_step = 1.0 + (1e-5 + 1e8 / 1e9) + 1.0;
  EXPECT_NEAR(simulate_plan(plan, cluster).metrics.makespan_seconds, 3 * one_step, 3 * one_step * kRelative);
}

// A batch norm's statistics: a training step's forward reads its input twice and writes its
// output (3 passes of [4, 8, 6, 6] fp32 = 4,608 bytes each), its backward reads x and dy twice
// and writes dx (5); an inference step normalises with the running statistics (2 passes). The
// 16 parameters (gamma and beta) add 64 bytes forward and 128 backward.
TEST(BatchStatistics, ATrainingStepReadsTheInputOnceMorePerDirection) {
  OpGraph graph;
  LayerBuilder builder(graph, 4, 4);
  builder.batch_norm("bn", builder.input("x", {8, 6, 6}));
  Cluster cluster = testing::gpus(1);
  Placement placement{{0, 0}, {}};
  const double pass = 4.0 * 8 * 6 * 6 * 4;
  auto bn_bytes = [&](StepKind kind, Phase phase) {
    RunOptions run;
    run.kind = kind;
    for (const Task& task : build_plan(graph, placement, cluster, run, "bn").tasks) {
      if (task.op == "bn" && task.phase == phase && task.kind == TaskKind::kCompute) return task.memory_bytes;
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(bn_bytes(StepKind::kTraining, Phase::kForward), 3 * pass + 64);
  EXPECT_DOUBLE_EQ(bn_bytes(StepKind::kTraining, Phase::kBackward), 5 * pass + 128);
  EXPECT_DOUBLE_EQ(bn_bytes(StepKind::kInference, Phase::kForward), 2 * pass + 64);
}

// The run's memory format reaches the plan and its file: "memory_format" is written only when it
// is not NCHW (plans of NCHW frameworks read as before), and a bad value names its path.
TEST(PlanFile, KeepsTheMemoryFormat) {
  Cluster cluster = testing::gpus(2);
  cluster.add_link(0, 1, testing::round_link(1e9, 1e-5));
  ExecutionPlan plan = mlp_plan(cluster, {0, 1});
  EXPECT_FALSE(write_plan_json(plan, cluster).contains("memory_format"));
  plan.memory_format = MemoryFormat::kNhwc;
  Json written = write_plan_json(plan, cluster);
  EXPECT_EQ(written.at("memory_format"), "nhwc");
  EXPECT_EQ(read_plan_json(JsonReader(written, "plan.json")).plan.memory_format, MemoryFormat::kNhwc);
  written["memory_format"] = "chwn";
  try {
    read_plan_json(JsonReader(written, "plan.json"));
    FAIL() << "a bad memory format was read";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/memory_format"), std::string::npos) << error.what();
  }
  const Scenario scenario = testing::scenario_from_text(
      R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
          "run": {"precision": "fp16", "memory_format": "nhwc"}})");
  EXPECT_EQ(scenario.run.memory_format, MemoryFormat::kNhwc);
  EXPECT_EQ(plan_scenario(scenario).plan.memory_format, MemoryFormat::kNhwc);
}

// The slowest GPU's factor (docs/cost-model.md) travels with the plan, written only when it is not
// 1; one below 1 (a step faster than its typical GPU) names its path.
TEST(PlanFile, KeepsTheSlowestGpusFactor) {
  Cluster cluster = testing::gpus(2);
  cluster.add_link(0, 1, testing::round_link(1e9, 1e-5));
  ExecutionPlan plan = mlp_plan(cluster, {0, 1});
  EXPECT_FALSE(write_plan_json(plan, cluster).contains("lockstep_gemm_factor"));
  plan.lockstep_gemm_factor = 1.0232;
  plan.lockstep_gpus = 8;
  Json written = write_plan_json(plan, cluster);
  const PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  EXPECT_EQ(read.plan.lockstep_gemm_factor, 1.0232);
  EXPECT_EQ(read.plan.lockstep_gpus, 8);
  written["lockstep_gemm_factor"] = 0.9;
  try {
    read_plan_json(JsonReader(written, "plan.json"));
    FAIL() << "a factor below 1 was read";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/lockstep_gemm_factor"), std::string::npos) << error.what();
  }
}

TEST(PlanFile, RoundTripKeepsEveryTaskAndTheSimulatedTimes) {
  Cluster cluster = testing::gpus(2);
  cluster.add_link(0, 1, testing::round_link(1e9, 1e-5));
  ExecutionPlan plan = mlp_plan(cluster, {0, 1});
  Json written = write_plan_json(plan, cluster);
  PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  ASSERT_EQ(read.plan.tasks.size(), plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& a = plan.tasks[i];
    const Task& b = read.plan.tasks[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.deps, b.deps);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.source, b.source);
    EXPECT_DOUBLE_EQ(a.flops, b.flops);
    EXPECT_DOUBLE_EQ(a.bytes, b.bytes);
    EXPECT_DOUBLE_EQ(a.memory_bytes, b.memory_bytes);
    EXPECT_DOUBLE_EQ(a.output_bytes, b.output_bytes);
    EXPECT_EQ(a.keep_until, b.keep_until);
    EXPECT_EQ(a.reads_dep_outputs, b.reads_dep_outputs) << a.name;
  }
  // The updates only wait for their backward tasks (reads_dep_outputs false, written as such).
  EXPECT_TRUE(std::any_of(plan.tasks.begin(), plan.tasks.end(), [](const Task& t) { return !t.reads_dep_outputs; }));
  EXPECT_EQ(write_plan_json(read.plan, read.cluster).dump(), written.dump());
  const SimulatedRun original = simulate_plan(plan, cluster);
  const SimulatedRun reread = simulate_plan(read.plan, read.cluster);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    EXPECT_EQ(original.timeline.tasks[i].end_seconds, reread.timeline.tasks[i].end_seconds);
  }
  for (DeviceId d : {0, 1}) {
    EXPECT_EQ(original.metrics.devices[d].peak_memory_bytes, reread.metrics.devices[d].peak_memory_bytes);
  }
}

TEST(PlanFile, BadReferencesAreInputErrorsWithTheirPath) {
  Cluster cluster = testing::gpus(1);
  ExecutionPlan plan = testing::empty_plan(cluster);
  testing::add(plan, testing::compute_task(0, 1e9));
  Json written = write_plan_json(plan, cluster);
  written["tasks"][0]["deps"] = {7};
  try {
    read_plan_json(JsonReader(written, "plan.json"));
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/tasks/0/deps/0");
  }
  written["schema_version"] = 99;
  EXPECT_THROW(read_plan_json(JsonReader(written, "plan.json")), InputError);
}

// Version 2 writes an all-gather of S as a task of S bytes; version 1 wrote it as an all-reduce
// task of S / 2 and is read as S. Kinds the engines do not run are refused with their path.
TEST(PlanFile, AllGathersCarryTheirNcclTestsSizeAndVersionOneIsConverted) {
  Cluster cluster = testing::gpus(4);
  for (size_t i = 0; i < 4; ++i) cluster.add_link(i, (i + 1) % 4, testing::round_link());
  ExecutionPlan plan = testing::empty_plan(cluster);
  Task gather;
  gather.kind = TaskKind::kCollective;
  gather.phase = Phase::kCollective;
  gather.group = {0, 1, 2, 3};
  gather.collective = CollectiveKind::kAllGather;
  gather.bytes = 8e6;
  testing::add(plan, gather);
  Json written = write_plan_json(plan, cluster);
  EXPECT_EQ(written["schema_version"], 2);
  EXPECT_EQ(written["tasks"][0]["collective"], "all_gather");
  EXPECT_DOUBLE_EQ(written["tasks"][0]["bytes"].get<double>(), 8e6);
  EXPECT_DOUBLE_EQ(read_plan_json(JsonReader(written, "plan.json")).plan.tasks[0].bytes, 8e6);
  Json version_one = written;
  version_one["schema_version"] = 1;
  version_one["tasks"][0]["bytes"] = 4e6;
  EXPECT_DOUBLE_EQ(read_plan_json(JsonReader(version_one, "plan.json")).plan.tasks[0].bytes, 8e6);
  // Version 1 could give such a task any all-reduce algorithm: it runs as a ring now.
  version_one["tasks"][0]["algorithm"] = "tree";
  EXPECT_EQ(read_plan_json(JsonReader(version_one, "plan.json")).plan.tasks[0].algorithm, CollectiveAlgorithm::kRing);
  Json broadcast = written;
  broadcast["tasks"][0]["collective"] = "broadcast";
  try {
    read_plan_json(JsonReader(broadcast, "plan.json"));
    FAIL();
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/tasks/0/collective");
  }
  Json tree = written;
  tree["tasks"][0]["algorithm"] = "tree";
  EXPECT_THROW(read_plan_json(JsonReader(tree, "plan.json")), InputError);
}

// A plan file's all-to-all ("collective": "alltoall") runs as pairwise exchanges, its default
// algorithm; on four GPUs behind a switch it takes 2a + (3/4) S / B on either tier. Where two of
// its devices have no route (a ring of GPUs: routes never pass through a GPU) it is refused at
// the task's path.
TEST(PlanFile, AnAllToAllRunsAsPairwiseExchanges) {
  auto plan_on = [](const Cluster& cluster) {
    ExecutionPlan plan = testing::empty_plan(cluster);
    Task dispatch;
    dispatch.kind = TaskKind::kCollective;
    dispatch.phase = Phase::kCollective;
    dispatch.group = {0, 1, 2, 3};
    dispatch.collective = CollectiveKind::kAllToAll;
    dispatch.algorithm = CollectiveAlgorithm::kPairwise;
    dispatch.bytes = 8e6;
    testing::add(plan, dispatch);
    Json written = write_plan_json(plan, cluster);
    written["tasks"][0].erase("algorithm");  // the default
    return written;
  };
  Cluster star = testing::gpus(4);
  const VertexId hub = star.add_switch("switch");
  for (size_t i = 0; i < 4; ++i) star.add_link(star.device(i).vertex, hub, testing::round_link(1e9, 1e-5));
  const Json written = plan_on(star);
  EXPECT_EQ(written["tasks"][0]["collective"], "alltoall");
  const PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  ASSERT_EQ(read.plan.tasks.size(), 1u);
  EXPECT_EQ(read.plan.tasks[0].collective, CollectiveKind::kAllToAll);
  EXPECT_EQ(read.plan.tasks[0].algorithm, CollectiveAlgorithm::kPairwise);
  const double expected = 2 * 1e-5 + 0.75 * 8e6 / 1e9;
  EXPECT_NEAR(estimate_step(read.plan, read.cluster).step_seconds, expected, expected * 1e-9);

  Cluster ring = testing::gpus(4);
  for (size_t i = 0; i < 4; ++i) ring.add_link(i, (i + 1) % 4, testing::round_link());
  try {
    read_plan_json(JsonReader(plan_on(ring), "plan.json"));
    FAIL() << "an all-to-all without routes accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/tasks/0");  // its algorithm is the default
    EXPECT_NE(std::string(error.what()).find("a route between every two devices"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace plan_test
}  // namespace placesim
