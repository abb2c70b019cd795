// TensorFlow placer semantics: default device, manual rules, CPU-only ops, colocation, soft
// placement, and the log_device_placement format.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sim/cluster/cluster_builder.h"
#include "sim/placement/placement.h"
#include "sim/placement/placement_log.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/spec/spec_error.h"

namespace placesim {
namespace placement_test {  // a unity batch holds several test files
namespace {

HardwareCatalog catalog() { return HardwareCatalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles"); }

Cluster cluster_from(const std::string& text) {
  Json description = Json::parse(text);
  return build_cluster(JsonReader(description, "test.json"), catalog(), ".");
}

Cluster laptop() { return cluster_from(R"({"template": "laptop_gtx850m"})"); }

Op make_op(const std::string& name, const std::string& type, OpKind kind) {
  Op op;
  op.name = name;
  op.type = type;
  op.kind = kind;
  return op;
}

OpGraph three_ops() {
  OpGraph graph;
  Op a = make_op("a", "VariableV2", OpKind::kVariable);
  Op read = make_op("a/read", "Identity", OpKind::kDataMovement);
  read.colocate_with = "a";
  Op save = make_op("save", "SaveV2", OpKind::kOther);
  save.cpu_only = true;
  Op matmul = make_op("dense/MatMul", "MatMul", OpKind::kMatMul);
  OpId ia = graph.add_op(a), ir = graph.add_op(read), is = graph.add_op(save), im = graph.add_op(matmul);
  graph.add_edge(ia, ir);
  graph.add_edge(ir, im);
  graph.add_edge(ia, is);
  return graph;
}

std::string device_of(const OpGraph& graph, const Cluster& cluster, const Placement& placement, const std::string& op) {
  return cluster.device(placement.device_of_op[graph.find(op)]).name.local();
}

TEST(Placement, DefaultPlacerPutsOpsOnGpu0AndCpuOnlyOpsOnCpu0) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  Placement placement = place_ops(graph, cluster, {});
  EXPECT_EQ(device_of(graph, cluster, placement, "a"), "GPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "a/read"), "GPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "dense/MatMul"), "GPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "save"), "CPU:0");
}

TEST(Placement, WithoutAGpuEverythingGoesToCpu0) {
  Cluster cluster = cluster_from(R"({"node": {"devices": [{"name": "CPU:0", "profile": "x86-server-cpu"}]}})");
  OpGraph graph = three_ops();
  Placement placement = place_ops(graph, cluster, {});
  for (OpId id = 0; id < graph.size(); ++id) EXPECT_EQ(cluster.device(placement.device_of_op[id]).name.local(), "CPU:0");
}

TEST(Placement, FirstMatchingRuleWinsAndGlobsMatchScopes) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.rules = {{"dense/*", "/cpu:0", 0},
                   {"a*", "/device:GPU:0", 1}};
  Placement placement = place_ops(graph, cluster, options);
  EXPECT_EQ(device_of(graph, cluster, placement, "dense/MatMul"), "CPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "a"), "GPU:0");
}

TEST(Placement, ColocatedOpsFollowTheFirstExplicitRequestInTheirGroup) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.rules = {{"a", "/cpu:0", 0}};  // only the variable is pinned
  Placement placement = place_ops(graph, cluster, options);
  EXPECT_EQ(device_of(graph, cluster, placement, "a"), "CPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "a/read"), "CPU:0");  // colocated with a
}

TEST(Placement, ConflictingRequestsInAColocationGroupAreAnError) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.rules = {{"a", "/cpu:0", 0}, {"a/read", "/gpu:0", 1}};
  try {
    place_ops(graph, cluster, options);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.option(), "placement/rules/1/device");
    EXPECT_NE(std::string(error.what()).find("colocated"), std::string::npos) << error.what();
  }
}

TEST(Placement, MissingDeviceIsAnErrorNamingTheRule) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.rules = {{"dense/*", "/gpu:3", 0}};
  try {
    place_ops(graph, cluster, options);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.scope(), SpecError::Scope::kStrategy);
    EXPECT_EQ(error.option(), "placement/rules/0/device");
    EXPECT_NE(std::string(error.what()).find("/gpu:3"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("allow_soft_placement"), std::string::npos);
  }
}

TEST(Placement, SoftPlacementFallsBackToTheDefaultDeviceWithANote) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.allow_soft_placement = true;
  options.rules = {{"dense/*", "/gpu:3", 0}, {"save", "/gpu:0", 1}};
  Placement placement = place_ops(graph, cluster, options);
  EXPECT_EQ(device_of(graph, cluster, placement, "dense/MatMul"), "GPU:0");
  EXPECT_EQ(device_of(graph, cluster, placement, "save"), "CPU:0");  // CPU-only, moved off the GPU
  EXPECT_EQ(placement.notes.size(), 2u);
}

TEST(Placement, CpuOnlyOpPinnedToAGpuIsAnErrorWithoutSoftPlacement) {
  Cluster cluster = laptop();
  OpGraph graph = three_ops();
  PlacementOptions options;
  options.rules = {{"save", "/gpu:0", 0}};
  EXPECT_THROW(place_ops(graph, cluster, options), SpecError);
}

TEST(Placement, ShorthandsAndFullNamesResolveToTheSameDevice) {
  Cluster cluster = cluster_from(R"({"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "ib_edr"}})");
  OpGraph graph = three_ops();
  for (const char* name : {"/job:worker/replica:0/task:1/device:GPU:3", "/job:worker/task:1/gpu:3"}) {
    PlacementOptions options;
    options.rules = {{"dense/*", name, 0}};
    Placement placement = place_ops(graph, cluster, options);
    EXPECT_EQ(cluster.device(placement.device_of_op[graph.find("dense/MatMul")]).name.canonical(),
              "/job:worker/replica:0/task:1/device:GPU:3");
  }
  // "/gpu:0" matches GPU:0 of every task; like TensorFlow we take the first (task 0).
  PlacementOptions options;
  options.rules = {{"dense/*", "/gpu:0", 0}};
  Placement placement = place_ops(graph, cluster, options);
  EXPECT_EQ(cluster.device(placement.device_of_op[graph.find("dense/MatMul")]).name.canonical(),
            "/job:worker/replica:0/task:0/device:GPU:0");
}

TEST(Placement, GlobMatching) {
  EXPECT_TRUE(glob_match("a/*", "a/read"));
  EXPECT_FALSE(glob_match("a/*", "add"));
  EXPECT_TRUE(glob_match("Const*", "Const_1"));
  EXPECT_TRUE(glob_match("?onst", "Const"));
  EXPECT_FALSE(glob_match("a", "add"));
  EXPECT_TRUE(glob_match("*", ""));
  // Literal and "*suffix" patterns (compared directly) against the general rule.
  EXPECT_TRUE(glob_match("h.0/qkv", "h.0/qkv"));
  EXPECT_FALSE(glob_match("h.0/qkv", "h.0/qkvx"));
  EXPECT_TRUE(glob_match("*/qkv", "h.12/attn/qkv"));
  EXPECT_TRUE(glob_match("*/qkv", "/qkv"));
  EXPECT_FALSE(glob_match("*/qkv", "qkv"));
  EXPECT_FALSE(glob_match("*/qkv", "h.12/qkv_bias"));
  EXPECT_FALSE(glob_match("*/qkv", "h.12/qkv/"));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("**/qkv", "h.1/qkv"));
  EXPECT_TRUE(glob_match("*/q?v", "h.1/qkv"));
  EXPECT_FALSE(glob_match("*/q?v", "h.1/qv"));
  EXPECT_TRUE(glob_match("h.*/mlp_fc", "h.3/expert_1/mlp_fc"));
  EXPECT_FALSE(glob_match("h.*/mlp_fc", "g.3/mlp_fc"));
}

// A pattern classified once answers as glob_match does, for each of its three kinds.
TEST(Placement, AGlobPatternClassifiedOnceMatchesAsGlobMatch) {
  const std::vector<std::string> names = {"h.0/qkv", "h.12/attn/qkv", "/qkv", "qkv", "h.12/qkv_bias", "h.3/expert_1/mlp_fc",
                                          "g.3/mlp_fc", "", "h.1/qv"};
  const std::vector<GlobPattern> patterns = glob_patterns({"h.0/qkv", "*/qkv", "h.*/mlp_fc", "*/q?v", "*", "**/qkv"});
  for (const GlobPattern& pattern : patterns) {
    for (const std::string& name : names) EXPECT_EQ(pattern.matches(name), glob_match(pattern.text(), name)) << pattern.text() << " " << name;
  }
  EXPECT_TRUE(matches_any(glob_patterns({"*/mlp_proj", "*/qkv"}), "h.2/qkv"));
  EXPECT_FALSE(matches_any(glob_patterns({"*/mlp_proj", "*/qkv"}), "h.2/qkv_bias"));
  EXPECT_FALSE(matches_any({}, "h.2/qkv"));
}

// The seed scenario's log, compared with the TensorFlow 1.x log_device_placement format (device
// names of TensorFlow 1.4 and later, as every placesim output): "Device mapping:", one line per
// GPU, then "name: (Type): /job:localhost/replica:0/task:0/device:CPU:0".
TEST(PlacementLog, SeedScenarioMatchesTheGoldenTensorFlowLog) {
  Scenario scenario = load_scenario(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/seed_device_placement.json",
                                    catalog());
  Placement placement = place_ops(scenario.graph, scenario.cluster, scenario.strategies.front().placement);
  std::ifstream golden(std::filesystem::path(PLACESIM_SOURCE_DIR) / "tests/golden/seed_device_placement.log");
  std::stringstream expected;
  expected << golden.rdbuf();
  EXPECT_EQ(placement_log(scenario.graph, scenario.cluster, placement) + "\n", expected.str());
}

TEST(PlacementLog, LinesHaveTensorFlowsShape) {
  Scenario scenario = load_scenario(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/seed_device_placement.json",
                                    catalog());
  Placement placement = place_ops(scenario.graph, scenario.cluster, scenario.strategies.front().placement);
  std::string log = placement_log(scenario.graph, scenario.cluster, placement);
  EXPECT_EQ(log.rfind("Device mapping:\n/job:localhost/replica:0/task:0/device:GPU:0 -> device: 0, name: GeForce GTX "
                      "850M, pci bus id: 0000:01:00.0, compute capability: 5.0\n",
                      0),
            0u);
  for (const char* line : {"b: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0\n",
                           "a/read: (Identity): /job:localhost/replica:0/task:0/device:CPU:0\n",
                           "a/Assign: (Assign): /job:localhost/replica:0/task:0/device:CPU:0\n",
                           "Const_1: (Const): /job:localhost/replica:0/task:0/device:CPU:0\n",
                           "add: (Add): /job:localhost/replica:0/task:0/device:GPU:0\n", "init: (NoOp): "}) {
    EXPECT_NE(log.find(line), std::string::npos) << line;
  }
  // One naming style: none of TensorFlow 1.3's lower-case "/cpu:0" or "/gpu:0" (issue 24).
  EXPECT_EQ(log.find("/cpu:"), std::string::npos) << log;
  EXPECT_EQ(log.find("/gpu:"), std::string::npos) << log;
}

// A profile gives one bus id for its kind of GPU; each GPU of a machine gets its own: the
// profile's for the first, bus + k for the k-th (DGX-1 V100: 0000:06:00.0 .. 0000:0d:00.0), the same
// again on the next machine; a template's own "pci_bus_id" wins.
TEST(PlacementLog, EachGpuOfAMachineHasItsOwnPciBusId) {
  EXPECT_EQ(pci_bus_id_of("0000:06:00.0", 0), "0000:06:00.0");
  EXPECT_EQ(pci_bus_id_of("0000:06:00.0", 4), "0000:0a:00.0");
  EXPECT_EQ(pci_bus_id_of("0000:fe:00.0", 2), "0000:fe:00.0");  // past bus ff: unchanged
  EXPECT_EQ(pci_bus_id_of("not an id", 1), "not an id");
  const std::string mapping = device_mapping(cluster_from(R"({"template": "dgx1_v100", "nodes": 2,
                                                               "fabric": {"link": "ib_edr"}})"));
  for (int task = 0; task < 2; ++task) {
    for (int gpu = 0; gpu < 8; ++gpu) {
      const std::string line = "/job:worker/replica:0/task:" + std::to_string(task) + "/device:GPU:" +
                               std::to_string(gpu) + " -> device: " + std::to_string(gpu) +
                               ", name: Tesla V100-SXM2-16GB, pci bus id: " + pci_bus_id_of("0000:06:00.0", gpu) +
                               ", compute capability: 7.0\n";
      EXPECT_NE(mapping.find(line), std::string::npos) << line << " in\n" << mapping;
    }
  }
  const std::string own = device_mapping(cluster_from(R"({"node": {"devices": [
      {"name": "GPU:0", "profile": "v100-sxm2-16gb", "pci_bus_id": "0000:85:00.0"},
      {"name": "GPU:1", "profile": "v100-sxm2-16gb"}],
      "links": [{"endpoints": ["GPU:0", "GPU:1"], "type": "nvlink2"}]}})"));
  EXPECT_NE(own.find("device:GPU:0 -> device: 0, name: Tesla V100-SXM2-16GB, pci bus id: 0000:85:00.0,"), std::string::npos)
      << own;
  EXPECT_NE(own.find("device:GPU:1 -> device: 1, name: Tesla V100-SXM2-16GB, pci bus id: 0000:06:00.0,"), std::string::npos)
      << own;
}

}  // namespace
}  // namespace placement_test
}  // namespace placesim
