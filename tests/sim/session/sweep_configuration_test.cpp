// A sweep configuration's typed scenario (sim/session/sweep_evaluation.h over
// sim/scenario/scenario_variations.h): the document read once, each configuration a variation of
// it. What the configuration sets (cluster, devices, data degree, micro-batches, batch), checked
// by hand; the same scenario reading the configuration's own document gives; and errors that name
// the option's path in the sweep.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/core/input_error.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/pipeline.h"
#include "sim/session/sweep_evaluation.h"
#include "sim/session/tier_step.h"

namespace placesim {
namespace {

const std::filesystem::path kRoot = PLACESIM_SOURCE_DIR;
const std::string kSmallGpt =
    R"("model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}})";

const HardwareCatalog& catalog() {
  static const HardwareCatalog hardware(kRoot / "hardware_profiles");
  return hardware;
}

SweepContext context_of(const std::string& text) { return make_sweep_context(Json::parse(text), "sweep.json", catalog()); }

std::string error_of(const SweepContext& context, size_t index) {
  try {
    configuration_scenario(context, index);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(SweepConfiguration, ADataParallelConfigurationRunsOnEachNodesFirstAccelerators) {
  const SweepContext context = context_of(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "run": {"steps": 2}, "sweep": {"devices_per_node": [2], "nodes": [2], "fabric": ["ib_edr"], "batch_size": [8],
    "precision": ["fp16"]}})");
  const Scenario scenario = configuration_scenario(context, 0);
  EXPECT_EQ(scenario.cluster.devices().size(), 2u * 10u);  // a DGX-1: 8 GPUs and 2 CPUs
  ASSERT_EQ(scenario.strategies.size(), 1u);
  const Strategy& strategy = scenario.strategies.front();
  ASSERT_TRUE(strategy.data_parallel);
  std::vector<std::string> replicas;
  for (DeviceId id : strategy.data_parallel->replicas) replicas.push_back(scenario.cluster.device(id).name.canonical());
  EXPECT_EQ(replicas, (std::vector<std::string>{
                          "/job:worker/replica:0/task:0/device:GPU:0", "/job:worker/replica:0/task:0/device:GPU:1",
                          "/job:worker/replica:0/task:1/device:GPU:0", "/job:worker/replica:0/task:1/device:GPU:1"}));
  EXPECT_EQ(scenario.run.steps, 2);
  EXPECT_EQ(scenario.run.batch_size, 8);
  EXPECT_EQ(scenario.run.precision, Precision::kFp16);
  EXPECT_EQ(strategy.name, "all-reduce");
}

// 4 nodes x 8 GPUs = 32: tensor 8 x pipeline 2 -> data 2; the global batch 64 -> 32 per replica
// -> 16 micro-batches of 2; ring all-reduces and representatives by default.
TEST(SweepConfiguration, A3dVariantGetsItsDataDegreeAndMicroBatchesFromTheConfiguration) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "sweep": {"nodes": [4], "fabric": ["ib_hdr"], "batch_size": [64],
              "strategies": [{"parallelism": {"tensor": [8, 4], "pipeline": [2, 3], "micro_batch_size": 2}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 4u);
  const Scenario scenario = configuration_scenario(context, 0);
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  EXPECT_EQ(p.tensor, 8);
  EXPECT_EQ(p.pipeline, 2);
  EXPECT_EQ(p.data, 2);
  EXPECT_EQ(p.micro_batches, 16);
  EXPECT_EQ(p.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(p.devices.size(), 32u);
  EXPECT_EQ(scenario.cluster.device(p.device(1, 0, 0)).node, 2);  // replica 1 starts on the third machine
  EXPECT_EQ(scenario.run.batch_size, 32);
  EXPECT_TRUE(scenario.run.symmetry);
  // tensor 8 x pipeline 3 = 24 does not divide 32 devices: not a configuration, with the reason.
  EXPECT_NE(error_of(context, 2).find("/sweep/strategies: 32 devices are not a multiple of tensor 8 x pipeline 3 = 24"),
            std::string::npos);
}

// A swept context degree divides the devices with the tensor and pipeline sizes: 32 GPUs / (tensor
// 8 x context 2 x pipeline 1) = data 2, so the global batch 64 is 32 sequences per data replica;
// context 4 leaves data 1 and 64; context 3 does not divide, and says so.
TEST(SweepConfiguration, ASweptContextDegreeTakesItsShareOfTheDevices) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "sweep": {"nodes": [4], "fabric": ["ib_hdr"], "batch_size": [64],
              "strategies": [{"parallelism": {"tensor": 8, "context": [2, 4, 3]}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 3u);
  const Scenario two = configuration_scenario(context, 0);
  const ParallelismOptions& p = *two.strategies.front().parallelism;
  EXPECT_EQ(p.context, 2);
  EXPECT_EQ(p.data, 2);
  EXPECT_EQ(p.replicas(), 4);
  EXPECT_EQ(two.run.batch_size, 32);
  EXPECT_EQ(two.cluster.device(p.device(1, 0, 0)).node, 1);  // context rank 1 of replica 0 on the second machine
  const Scenario four = configuration_scenario(context, 1);
  EXPECT_EQ(four.strategies.front().parallelism->data, 1);
  EXPECT_EQ(four.run.batch_size, 64);
  EXPECT_NE(error_of(context, 2).find("32 devices are not a multiple of tensor 8 x context 3 x pipeline 1 = 24"),
            std::string::npos)
      << error_of(context, 2);
}

// A swept expert degree takes no devices (its groups are data-parallel replicas): 8 GPUs / (tensor
// 2 x pipeline 2) = data 2 for both values; the device order reaches the configuration too (stage
// 1 of replica 0 is the strategy's device 2 x 2 = 4 with stages outermost).
TEST(SweepConfiguration, ASweptExpertDegreeKeepsTheDataDegree) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "sweep": {"nodes": [1], "batch_size": [8],
              "strategies": [{"parallelism": {"tensor": 2, "pipeline": 2, "expert": [1, 2],
                                              "device_order": "tp-cp-dp-pp"}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ParallelismOptions p = *configuration_scenario(context, i).strategies.front().parallelism;
    EXPECT_EQ(p.expert, static_cast<int64_t>(i + 1));
    EXPECT_EQ(p.data, 2);
    EXPECT_TRUE(p.pipeline_outermost);
    EXPECT_EQ(p.device(0, 1, 0), p.devices[4]);
  }
}

// PipeDream's schedule has no one-step cells for the closed form: a sweep on the analytical tier
// plans and list-schedules it whole, as `run` does on that tier, and the row is the same step.
TEST(SweepConfiguration, APipeDreamVariantRunsOnTheAnalyticalTier) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "run": {"steps": 2},
    "sweep": {"nodes": [1], "batch_size": [16],
              "strategies": [{"parallelism": {"pipeline": 4, "micro_batch_size": 2, "stage_split": "layers",
                                              "schedule": ["1f1b", "pipedream", "pipedream-2bw"]}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 3u);
  const SweepRow flushed = evaluate_configuration(context, 0, Tier::kAnalytical);
  ASSERT_EQ(flushed.status, RowStatus::kOk) << flushed.reason;
  for (size_t configuration : {1, 2}) {  // PipeDream, PipeDream-2BW
    const SweepRow row = evaluate_configuration(context, configuration, Tier::kAnalytical);
    ASSERT_EQ(row.status, RowStatus::kOk) << row.reason;
    Scenario scenario = configuration_scenario(context, configuration);
    EXPECT_EQ(scenario.strategies.front().parallelism->double_buffered, configuration == 2);
    scenario.run.tier = Tier::kAnalytical;
    const double step = evaluate_on_tier(scenario, scenario.strategies.front(), false).step_seconds;
    EXPECT_NEAR(row.step_seconds, step, 1e-12 * step);
    EXPECT_NE(row.step_seconds, flushed.step_seconds);
  }
}

// Configurations that differ only in GPipe or 1F1B share one micro-batch's cells (their step's
// and their baseline's): grouped by the sweep alone, and evaluated together they give the rows
// each gives alone. A key that missed what the cell depends on (nodes, micro-batch size,
// pipeline depth) would reuse a wrong cell and change a row.
TEST(SweepConfiguration, ConfigurationsDifferingOnlyInGpipeOr1f1bShareCellsAndGiveTheirOwnRows) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "run": {"steps": 1}, "simulation": {"symmetry": "off"},
    "sweep": {"nodes": [1, 2], "fabric": ["ib_hdr"], "batch_size": [16],
              "strategies": [{"parallelism": {"pipeline": [2, 4], "micro_batch_size": [1, 2], "stage_split": "layers",
                                              "schedule": ["gpipe", "1f1b", "pipedream"]}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 2u * 2u * 2u * 3u);
  std::vector<SweepRow> together;
  std::vector<size_t> groups;  // sizes, in order of each group's first configuration
  std::vector<bool> seen(context.spec.configurations.size(), false);
  for (size_t i = 0; i < seen.size(); ++i) {
    if (seen[i]) continue;
    const std::vector<size_t> group = configurations_sharing_cells(context, i, Tier::kAnalytical);
    EXPECT_EQ(configurations_sharing_cells(context, i, Tier::kSimulated), std::vector<size_t>{i});
    groups.push_back(group.size());
    for (size_t member : group) {
      seen[member] = true;
      const std::string schedule = context.spec.strategies[context.spec.configurations[member].strategy]
                                       .strategy["parallelism"]["schedule"].get<std::string>();
      EXPECT_EQ(group.size(), schedule == "pipedream" ? 1u : 2u) << member;
    }
    for (SweepRow& row : evaluate_configurations(context, group, Tier::kAnalytical)) together.push_back(std::move(row));
  }
  EXPECT_EQ(groups.size(), 2u * 2u * 2u * 2u);  // (nodes, pipeline, micro-batch size) x {GPipe+1F1B, PipeDream}
  ASSERT_EQ(together.size(), context.spec.configurations.size());
  size_t differing_schedules = 0;
  for (const SweepRow& row : together) {
    const SweepRow alone = evaluate_configuration(context, row.index, Tier::kAnalytical);
    ASSERT_EQ(alone.status, RowStatus::kOk) << alone.reason;
    EXPECT_EQ(row.status, alone.status) << row.index;
    EXPECT_EQ(row.step_seconds, alone.step_seconds) << row.index;
    EXPECT_EQ(row.samples_per_second, alone.samples_per_second) << row.index;
    EXPECT_EQ(row.single_replica_samples_per_second, alone.single_replica_samples_per_second) << row.index;
    EXPECT_EQ(row.peak_memory_bytes, alone.peak_memory_bytes) << row.index;
    EXPECT_EQ(row.tasks, alone.tasks) << row.index;
  }
  for (size_t i = 0; i + 1 < together.size(); ++i) {
    const size_t a = together[i].index, b = together[i + 1].index;
    if (configurations_sharing_cells(context, a, Tier::kAnalytical).size() == 2 &&
        configurations_sharing_cells(context, a, Tier::kAnalytical) ==
            configurations_sharing_cells(context, b, Tier::kAnalytical) &&
        together[i].peak_memory_bytes != together[i + 1].peak_memory_bytes) {
      ++differing_schedules;  // GPipe and 1F1B from one cell: the same bubble, not the same memory
    }
  }
  EXPECT_GT(differing_schedules, 0u);
}

TEST(SweepConfiguration, SweptLayoutOptionsReachTheConfiguration) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "sweep": {"nodes": [1], "batch_size": [8], "strategies": [
      {"parallelism": {"tensor": 2, "pipeline": 4, "virtual_stages": [1, 2]}},
      {"name": "zero", "parallelism": {"zero": [0, 3]}},
      {"name": "fsdp", "parallelism": {"fsdp": "hybrid"}},
      {"name": "split", "parallelism": {"pipeline": 2, "stage_split": "layers"}}]}})");
  const ParallelismOptions interleaved = *configuration_scenario(context, 1).strategies.front().parallelism;
  EXPECT_EQ(interleaved.virtual_stages, 2);
  EXPECT_EQ(interleaved.data, 1);  // 8 GPUs / (tensor 2 x pipeline 4)
  EXPECT_EQ(interleaved.micro_batches, 8);
  const ParallelismOptions zero3 = *configuration_scenario(context, 3).strategies.front().parallelism;
  EXPECT_EQ(zero3.zero_stage, 3);
  EXPECT_EQ(zero3.data, 8);
  EXPECT_EQ(zero3.zero_shards(), 8);
  // Hybrid sharding: the 8 replicas of one machine are one shard group.
  const ParallelismOptions hybrid = *configuration_scenario(context, 4).strategies.front().parallelism;
  EXPECT_EQ(hybrid.zero_stage, 3);
  EXPECT_EQ(hybrid.shard_group, 8);
  EXPECT_TRUE(configuration_scenario(context, 5).strategies.front().parallelism->whole_layer_stages);
}

// The typed configuration is what reading its own scenario document gives: the same graph,
// cluster and strategy, so the same plan and the same analytical step.
TEST(SweepConfiguration, IsWhatReadingTheConfigurationsOwnDocumentGives) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "run": {"optimizer": "adam"},
    "perturbations": {"device_speed": [{"device": "/task:1/device:GPU:3", "factor": 0.5}]},
    "sweep": {"devices_per_node": [4], "nodes": [2], "fabric": ["ib_hdr"], "batch_size": [16], "precision": ["bf16"],
              "strategies": [{"data_parallel": {"algorithm": "hierarchical", "bucket_bytes": 1000000}}]}})");
  const Scenario typed = configuration_scenario(context, 0);
  const Json document = Json::parse(R"({)" + kSmallGpt + R"(,
    "cluster": {"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}},
    "run": {"optimizer": "adam", "batch_size": 16, "precision": "bf16"},
    "perturbations": {"device_speed": [{"device": "/task:1/device:GPU:3", "factor": 0.5}]},
    "strategy": {"name": "data parallel", "data_parallel": {"algorithm": "hierarchical", "bucket_bytes": 1000000,
      "replicas": ["/task:0/device:GPU:0", "/task:0/device:GPU:1", "/task:0/device:GPU:2", "/task:0/device:GPU:3",
                   "/task:1/device:GPU:0", "/task:1/device:GPU:1", "/task:1/device:GPU:2", "/task:1/device:GPU:3"]}}})");
  const Scenario read = read_scenario(JsonReader(document, "configuration.json"), catalog(), kRoot);
  ASSERT_EQ(typed.graph.size(), read.graph.size());
  EXPECT_EQ(typed.cluster.devices().size(), read.cluster.devices().size());
  EXPECT_EQ(typed.cluster.links().size(), read.cluster.links().size());
  const PlannedScenario typed_plan = plan_strategy(typed, typed.strategies.front());
  const PlannedScenario read_plan = plan_strategy(read, read.strategies.front());
  ASSERT_EQ(typed_plan.plan.tasks.size(), read_plan.plan.tasks.size());
  const SimulatedRun typed_run = run_plan(typed_plan.plan, typed.cluster, Tier::kAnalytical);
  const SimulatedRun read_run = run_plan(read_plan.plan, read.cluster, Tier::kAnalytical);
  EXPECT_EQ(typed_run.metrics.step_time_seconds, read_run.metrics.step_time_seconds);
  EXPECT_GT(typed_run.metrics.step_time_seconds, 0);
  // The slowed GPU is the perturbed one of the configuration's cluster.
  EXPECT_EQ(typed.cluster.device(typed.strategies.front().data_parallel->replicas[7]).speed_factor, 0.5);
}

// An option that does not fit a configuration's devices names the value in the sweep's list;
// a perturbation naming a device the configuration does not have names the perturbation.
TEST(SweepConfiguration, ErrorsNameTheOptionsPathInTheSweep) {
  const SweepContext context = context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
    "perturbations": {"device_speed": [{"device": "/task:1/device:GPU:0", "factor": 0.5}]},
    "sweep": {"nodes": [1, 2], "fabric": ["ib_hdr"], "batch_size": [16],
              "strategies": [{"parallelism": {"tensor": [2, 16]}}]}})");
  ASSERT_EQ(context.spec.configurations.size(), 4u);  // 1 or 2 nodes x tensor 2 or 16
  EXPECT_NE(error_of(context, 0).find("sweep.json: /perturbations/device_speed/0/device: no device of the cluster matches"),
            std::string::npos);
  EXPECT_EQ(error_of(context, 2), "no error");
  EXPECT_NE(error_of(context, 3).find("/sweep/strategies/0/parallelism/tensor/1: a tensor-parallel group of 16 devices is "
                                      "larger than a machine (8 accelerators)"),
            std::string::npos);
}

// A variant's options are read once, when the sweep starts: a bad value is the sweep's error at
// its path, not a reason repeated on every configuration.
TEST(SweepConfiguration, ABadVariantOptionIsRefusedWhenTheSweepStarts) {
  try {
    context_of(R"({)" + kSmallGpt + R"(, "cluster": {"template": "dgx_a100"},
      "sweep": {"strategies": [{"parallelism": {"tensor": [1, 2], "schedule": "1fb1"}}]}})");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/sweep/strategies/0/parallelism/schedule");
  }
  try {
    context_of(R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
      "sweep": {"strategies": [{"data_parallel": {"aggregation": "allreduce", "num_ps": 2}}]}})");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/sweep/strategies/0/data_parallel/num_ps");
  }
}

}  // namespace
}  // namespace placesim
