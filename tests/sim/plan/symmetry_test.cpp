// Symmetry (sim/plan/plan_symmetry.h): a 3D-parallel step simulated with one tensor rank of one
// replica per stage must give the full simulation's timeline exactly, task for task and device
// for device, including where mirrors share links (two GPUs per NIC on a DGX A100) and where the
// pipeline's transfers meet the tensor all-reduces of other GPUs on the NVSwitch.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "sim/plan/collective_schedule.h"
#include "sim/session/pipeline.h"
#include "sim/core/input_error.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace {

Scenario load(const std::string& text) { return testing::scenario_from_text(text); }

// tensor 4 x pipeline 2 x data 4 on four DGX A100: two stages per node, so pipeline transfers
// cross the NVSwitch; replicas on different nodes, so gradients cross the NICs, which GPUs share
// in pairs (100 GbE: the shared NIC, not PCIe, is the bottleneck).
std::string gpt_3d(const std::string& simulation, const std::string& fabric = R"({"link": "eth_100g"})") {
  return R"({"model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 1024, "heads": 16, "sequence": 512,
             "vocabulary": 32000}},
    "cluster": {"template": "dgx_a100", "nodes": 4, "fabric": )" + fabric + R"(},
    "strategy": {"parallelism": {"tensor": 4, "pipeline": 2, "data": 4, "micro_batches": 4, "schedule": "1f1b",
                                 "algorithm": "ring"}},
    "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 2})" +
         simulation + "}";
}

struct Simulated {
  PlannedScenario planned;
  SimulatedRun run;
};

Simulated simulate(const Scenario& scenario) {
  Simulated result{plan_scenario(scenario), {}};
  result.run = simulate_plan(result.planned.plan, scenario.cluster);
  return result;
}

TEST(Symmetry, RepresentativesGiveTheFullSimulationsTimelineExactly) {
  const Scenario full_scenario = load(gpt_3d(""));
  const Scenario symmetric_scenario = load(gpt_3d(R"(, "simulation": {"symmetry": "representatives"})"));
  const Simulated full = simulate(full_scenario);
  const Simulated symmetric = simulate(symmetric_scenario);
  ASSERT_TRUE(symmetric.planned.plan.symmetry.active());
  EXPECT_EQ(symmetric.planned.plan.symmetry.approximate_links, 0u);
  EXPECT_LT(symmetric.planned.plan.tasks.size() * 10, full.planned.plan.tasks.size());

  EXPECT_EQ(symmetric.run.metrics.step_time_seconds, full.run.metrics.step_time_seconds);
  // Every simulated task at the same times as its namesake in the full plan (names repeat:
  // compare the k-th task of each name).
  std::map<std::pair<std::string, int>, TaskInterval> full_times;
  std::map<std::string, int> seen;
  for (const Task& task : full.planned.plan.tasks) full_times[{task.name, seen[task.name]++}] = full.run.timeline.tasks[task.id];
  seen.clear();
  for (const Task& task : symmetric.planned.plan.tasks) {
    auto it = full_times.find({task.name, seen[task.name]++});
    ASSERT_NE(it, full_times.end()) << task.name;
    EXPECT_EQ(symmetric.run.timeline.tasks[task.id].start_seconds, it->second.start_seconds) << task.name;
    EXPECT_EQ(symmetric.run.timeline.tasks[task.id].end_seconds, it->second.end_seconds) << task.name;
  }
  // Every device, mirrors included, as busy and as full as in the full simulation.
  for (DeviceId id = 0; id < full.run.metrics.devices.size(); ++id) {
    const DeviceMetrics& expected = full.run.metrics.devices[id];
    const DeviceMetrics& actual = symmetric.run.metrics.devices[id];
    EXPECT_EQ(actual.busy_seconds, expected.busy_seconds) << id;
    EXPECT_EQ(actual.peak_memory_bytes, expected.peak_memory_bytes) << id;
  }
}

// NCCL's channels on a DGX-1 V100 (ring_channels_test.cpp): tensor 8 runs six rings at 20 GB/s,
// over the doubled NVLinks (40 GB/s, two rings each way) and the single ones (20 GB/s, one): the
// mirrored links differ in bandwidth but give every ring the same rate, and the quotient network
// keeps the step exact (the link-rate model: the template's measured curve would time the
// all-reduces without the links).
TEST(Symmetry, RepresentativesAreExactOverNcclsChannelsOnLinksOfTwoBandwidths) {
  auto scenario = [](const std::string& simulation) {
    return load(R"({"model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 1024, "heads": 16, "sequence": 512,
               "vocabulary": 32000}},
      "cluster": {"template": "dgx1_v100", "collective_profile": "none"},
      "strategy": {"parallelism": {"tensor": 8, "pipeline": 1, "data": 1, "micro_batches": 2, "algorithm": "ring"}},
      "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam", "steps": 2})" + simulation + "}");
  };
  const Scenario full_scenario = scenario("");
  const Simulated full = simulate(full_scenario);
  const Simulated symmetric = simulate(scenario(R"(, "simulation": {"symmetry": "representatives"})"));
  ASSERT_TRUE(symmetric.planned.plan.symmetry.active());
  std::vector<DeviceId> gpus;
  for (DeviceId id = 0; id < full_scenario.cluster.devices().size(); ++id) {
    if (full_scenario.cluster.device(id).spec.kind == DeviceKind::kGpu) gpus.push_back(id);
  }
  EXPECT_EQ(ring_channels_of(CollectiveAlgorithm::kRing, gpus, full_scenario.cluster).size(), 6u);
  EXPECT_EQ(symmetric.run.metrics.step_time_seconds, full.run.metrics.step_time_seconds);
}

// A fat tree of two nodes per leaf puts some data-parallel ring hops inside a leaf and others
// across the spine: the replicas' rings are not mirrors of each other, and symmetry says so.
TEST(Symmetry, IsRefusedWhereTheMirrorsRoutesDiffer) {
  const Scenario scenario = load(gpt_3d(R"(, "simulation": {"symmetry": "representatives"})",
                                        R"({"link": "ib_hdr", "topology": "fat_tree", "nodes_per_leaf": 2})"));
  try {
    plan_scenario(scenario);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/simulation/symmetry");
    EXPECT_NE(std::string(error.what()).find("symmetry does not hold"), std::string::npos) << error.what();
  }
}

TEST(Symmetry, IsRefusedWithJitter) {
  const Scenario scenario = load(gpt_3d(R"(, "simulation": {"symmetry": "representatives"},
      "perturbations": {"jitter": {"sigma": 0.1}})"));
  EXPECT_THROW(plan_scenario(scenario), InputError);
}

}  // namespace
}  // namespace placesim
