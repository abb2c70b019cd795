// read_scenario with a ScenarioReuse (what a sweep's configurations share): the graph and the
// cluster built once are the ones reading the document again would build, a different batch or
// cluster builds its own, and a perturbation of one document never reaches another.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

const std::filesystem::path kRoot = PLACESIM_SOURCE_DIR;

Json gpt_on_dgx(int64_t batch, int64_t nodes) {
  return Json::parse(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 512, "heads": 8, "sequence": 256, "vocabulary": 1024}},
    "cluster": {"template": "dgx_a100_80gb", "nodes": )" + std::to_string(nodes) + R"(, "fabric": {"link": "ib_hdr"}},
    "run": {"mode": "training", "batch_size": )" + std::to_string(batch) + R"(, "precision": "fp16", "optimizer": "adam"},
    "strategy": {"parallelism": {"tensor": 2, "pipeline": 2, "data": 2, "micro_batches": 2}},
    "simulation": {"tier": "closed-form"}})");
}

Scenario read(const Json& document, const HardwareCatalog& catalog, ScenarioReuse* reuse) {
  return read_scenario(JsonReader(document, "sweep.json"), catalog, kRoot, reuse);
}

DeviceId first_gpu_of_node(const Cluster& cluster, int node) {
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.device(id).node == node && cluster.device(id).name.kind == DeviceKind::kGpu) return id;
  }
  ADD_FAILURE() << "no GPU on node " << node;
  return 0;
}

double total_forward_flops(const OpGraph& graph) {
  double flops = 0;
  for (OpId v = 0; v < graph.size(); ++v) flops += graph.op(v).forward_flops;
  return flops;
}

TEST(ScenarioReuse, AReusedGraphAndClusterAreWhatReadingAgainBuilds) {
  const HardwareCatalog catalog(kRoot / "hardware_profiles");
  ScenarioReuse reuse;
  const Scenario first = read(gpt_on_dgx(8, 2), catalog, &reuse);
  Json other_strategy = gpt_on_dgx(8, 2);
  other_strategy["strategy"]["parallelism"]["tensor"] = 4;
  other_strategy["strategy"]["parallelism"]["pipeline"] = 1;
  const Scenario second = read(other_strategy, catalog, &reuse);
  EXPECT_EQ(reuse.graphs.entries.size(), 1u);
  EXPECT_EQ(reuse.clusters.entries.size(), 1u);

  const Scenario fresh = read(other_strategy, catalog, nullptr);
  ASSERT_EQ(second.graph.size(), fresh.graph.size());
  for (OpId v = 0; v < fresh.graph.size(); ++v) {
    EXPECT_EQ(second.graph.op(v).name, fresh.graph.op(v).name);
    EXPECT_EQ(second.graph.op(v).forward_flops, fresh.graph.op(v).forward_flops);
    EXPECT_EQ(second.graph.op(v).output_bytes, fresh.graph.op(v).output_bytes);
  }
  ASSERT_EQ(second.cluster.devices().size(), fresh.cluster.devices().size());
  ASSERT_EQ(second.cluster.devices().size(), first.cluster.devices().size());
  const DeviceId a = first_gpu_of_node(second.cluster, 0), b = first_gpu_of_node(second.cluster, 1);
  EXPECT_EQ(second.cluster.route_bandwidth_bytes_per_second(a, b), fresh.cluster.route_bandwidth_bytes_per_second(a, b));
  EXPECT_EQ(second.cluster.route_latency_seconds(a, b), fresh.cluster.route_latency_seconds(a, b));
  EXPECT_EQ(second.strategies.front().parallelism->tensor, 4);
}

TEST(ScenarioReuse, ADifferentBatchOrClusterBuildsItsOwn) {
  const HardwareCatalog catalog(kRoot / "hardware_profiles");
  ScenarioReuse reuse;
  const Scenario small = read(gpt_on_dgx(8, 2), catalog, &reuse);
  const Scenario large = read(gpt_on_dgx(16, 2), catalog, &reuse);
  const Scenario wider = read(gpt_on_dgx(16, 4), catalog, &reuse);
  EXPECT_EQ(reuse.graphs.entries.size(), 2u);
  EXPECT_EQ(reuse.clusters.entries.size(), 2u);
  // Every op of the GPT scales with the batch: twice the samples, twice the FLOPs.
  EXPECT_DOUBLE_EQ(total_forward_flops(large.graph), 2 * total_forward_flops(small.graph));
  EXPECT_EQ(wider.cluster.devices().size(), 2 * large.cluster.devices().size());
}

TEST(ScenarioReuse, OneDocumentsPerturbationDoesNotReachTheNext) {
  const HardwareCatalog catalog(kRoot / "hardware_profiles");
  ScenarioReuse reuse;
  Json slowed = gpt_on_dgx(8, 2);
  slowed["perturbations"] = Json::parse(R"({"device_speed": [{"device": "/task:0/device:GPU:0", "factor": 0.5}],
                                            "links": [{"match": "*", "bandwidth_factor": 0.25}]})");
  const Scenario perturbed = read(slowed, catalog, &reuse);
  const Scenario plain = read(gpt_on_dgx(8, 2), catalog, &reuse);
  const Scenario fresh = read(gpt_on_dgx(8, 2), catalog, nullptr);
  ASSERT_EQ(reuse.clusters.entries.size(), 1u);
  const DeviceId gpu0 = first_gpu_of_node(perturbed.cluster, 0), remote = first_gpu_of_node(perturbed.cluster, 1);
  EXPECT_EQ(perturbed.cluster.device(gpu0).speed_factor, 0.5);
  EXPECT_EQ(plain.cluster.device(gpu0).speed_factor, 1.0);
  EXPECT_DOUBLE_EQ(perturbed.cluster.route_bandwidth_bytes_per_second(gpu0, remote),
                   0.25 * fresh.cluster.route_bandwidth_bytes_per_second(gpu0, remote));
  EXPECT_EQ(plain.cluster.route_bandwidth_bytes_per_second(gpu0, remote),
            fresh.cluster.route_bandwidth_bytes_per_second(gpu0, remote));
}

TEST(ScenarioReuse, EachCacheStartsOverWhenFull) {
  const HardwareCatalog catalog(kRoot / "hardware_profiles");
  ScenarioReuse reuse;
  for (size_t batch = 1; batch <= ScenarioReuse::kMaxEntries + 1; ++batch) {
    read(gpt_on_dgx(static_cast<int64_t>(batch), 2), catalog, &reuse);
  }
  EXPECT_EQ(reuse.graphs.entries.size(), 1u);  // the 65th batch found 64 and started over
  EXPECT_EQ(reuse.clusters.entries.size(), 1u);
}

// Clusters are kept up to a device budget: one that would go over starts the cache over, one
// larger than the budget alone is built for its configuration and not kept.
TEST(ScenarioReuse, ClustersAreKeptWithinADeviceBudget) {
  const HardwareCatalog catalog(kRoot / "hardware_profiles");
  ScenarioReuse reuse;
  const size_t two_nodes = read(gpt_on_dgx(8, 2), catalog, nullptr).cluster.devices().size();
  reuse.clusters.budget = 3 * two_nodes;  // room for 2 + 4 nodes, not for 2 + 4 + 4 more
  read(gpt_on_dgx(8, 2), catalog, &reuse);
  read(gpt_on_dgx(8, 4), catalog, &reuse);
  EXPECT_EQ(reuse.clusters.entries.size(), 2u);
  EXPECT_EQ(reuse.clusters.held, 3 * two_nodes);
  read(gpt_on_dgx(8, 3), catalog, &reuse);  // 1.5 x two_nodes more: over, so it starts over
  EXPECT_EQ(reuse.clusters.entries.size(), 1u);
  EXPECT_EQ(reuse.clusters.held, 3 * two_nodes / 2);
  const Scenario huge = read(gpt_on_dgx(8, 8), catalog, &reuse);  // 4 x two_nodes alone: not kept
  EXPECT_EQ(huge.cluster.devices().size(), 4 * two_nodes);
  EXPECT_EQ(reuse.clusters.entries.size(), 1u);
  EXPECT_EQ(reuse.clusters.entries.count(gpt_on_dgx(8, 8).at("cluster").dump()), 0u);
}

}  // namespace
}  // namespace placesim
