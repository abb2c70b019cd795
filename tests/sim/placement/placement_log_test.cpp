// The placement log's op order and device names against TensorFlow 1.x's placer (the rule in
// sim/placement/placement_log.h) and against published log_device_placement outputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cluster/cluster_builder.h"
#include "sim/placement/placement.h"
#include "sim/placement/placement_log.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/pipeline.h"

namespace placesim {
namespace {

const std::filesystem::path kSource = PLACESIM_SOURCE_DIR;

HardwareCatalog catalog() { return HardwareCatalog(kSource / "hardware_profiles"); }

Scenario seed() { return load_scenario(kSource / "scenarios/seed_device_placement.json", catalog()); }

std::string seed_log(TensorFlowVersion version) {
  Scenario scenario = seed();
  Placement placement = place_ops(scenario.graph, scenario.cluster, scenario.strategies.front().placement);
  return placement_log(scenario.graph, scenario.cluster, placement, version);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The op lines of a log (everything after the device mapping).
std::vector<std::string> op_lines(const std::string& log) {
  std::vector<std::string> lines;
  for (const std::string& line : lines_of(log)) {
    if (line.find(": (") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> names_in_log_order(const OpGraph& graph, NodeIdOrder order) {
  std::vector<std::string> names;
  for (OpId id : placer_log_order(graph, order)) names.push_back(graph.op(id).name);
  return names;
}

// The seed's GraphDef, in TensorFlow's creation order (models/seed_add.cpp), with each node's
// inputs:
//   0 Const  1 a  2 a/Assign(a, Const)  3 a/read(a)  4 Const_1  5 b  6 b/Assign(b, Const_1)
//   7 b/read(b)  8 add(a/read, b/read)  9 init(^a/Assign, ^b/Assign)
// TF <= 1.11, GraphConstructor with a stack of ready nodes (top at the right):
//   ready [Const a Const_1 b]; pop b -> b/read ready (b/Assign still waits for Const_1)
//   [Const a Const_1 b/read]; pop b/read (add waits for a/read); pop Const_1 -> b/Assign ready;
//   pop b/Assign (init waits); pop a -> a/read ready; pop a/read -> add ready; pop add;
//   pop Const -> a/Assign ready; pop a/Assign -> init ready; pop init.
//   Node ids: b, b/read, Const_1, b/Assign, a, a/read, add, Const, a/Assign, init.
// The placer logs that order without the generators (Const_1, Const), then the generators.
TEST(PlacementLogOrder, SeedFollowsTheReadyStackThenTheGenerators) {
  const Scenario scenario = seed();
  EXPECT_EQ(names_in_log_order(scenario.graph, NodeIdOrder::kReadyStack),
            (std::vector<std::string>{"b", "b/read", "b/Assign", "a", "a/read", "add", "a/Assign", "init", "Const_1",
                                      "Const"}));
}

// TF >= 1.12 takes the smallest ready GraphDef index first, so node ids are the GraphDef order:
// Const, a, a/Assign, a/read, Const_1, b, b/Assign, b/read, add, init; generators last.
TEST(PlacementLogOrder, SeedFollowsTheGraphDefOrderFrom1_12) {
  const Scenario scenario = seed();
  EXPECT_EQ(names_in_log_order(scenario.graph, NodeIdOrder::kGraphDefOrder),
            (std::vector<std::string>{"a", "a/Assign", "a/read", "b", "b/Assign", "b/read", "add", "init", "Const",
                                      "Const_1"}));
}

// The published log of the seed's program (the tf.device example of a Chinese TensorFlow 1.x
// textbook, variables a and b on /cpu:0, result = a + b on /gpu:0, GeForce GTX 850M), as found in
// a public GitHub file (the search index names it by id 540498074 only, not by repository):
//   b: (VariableV2): /job:localhost/replica:0/task:0/cpu:0
//   b/read: (Identity): /job:localhost/replica:0/task:0/cpu:0
//   b/Assign: (Assign): /job:localhost/replica:0/task:0/cpu:0
//   a: (VariableV2): /job:localhost/replica:0/task:0/cpu:0
//   a/read: (Identity): /job:localhost/replica:0/task:0/cpu:0
//   add: (Add): /job:localhost/replica:0/task:0/gpu:0
//   a/Assign: (Assign): /job:localhost/replica:0/task :0/cpu:0
//   init: (No0p): /job:localhost/replica:0/task:0/cpu:0
//   Const_1: (Const): /job:localhost/replica:0/task:0/cpu:0
//   Const: (Const): /job:localhost/replica:0/task:0/cpu:0
// Retyped by hand there ("task :0", "No0p"); read as "task:0" and "NoOp" below. The same order is
// in the CPU-only run of the same book's program (index id 682965819) and in the issue's quote.
TEST(PlacementLog, SeedMatchesThePublishedTensorFlow13LogLineByLine) {
  const std::vector<std::string> published = {
      "b: (VariableV2): /job:localhost/replica:0/task:0/cpu:0",
      "b/read: (Identity): /job:localhost/replica:0/task:0/cpu:0",
      "b/Assign: (Assign): /job:localhost/replica:0/task:0/cpu:0",
      "a: (VariableV2): /job:localhost/replica:0/task:0/cpu:0",
      "a/read: (Identity): /job:localhost/replica:0/task:0/cpu:0",
      "add: (Add): /job:localhost/replica:0/task:0/gpu:0",
      "a/Assign: (Assign): /job:localhost/replica:0/task:0/cpu:0",
      "init: (NoOp): /job:localhost/replica:0/task:0/cpu:0",
      "Const_1: (Const): /job:localhost/replica:0/task:0/cpu:0",
      "Const: (Const): /job:localhost/replica:0/task:0/cpu:0"};
  EXPECT_EQ(op_lines(seed_log(TensorFlowVersion{3})), published);
}

TEST(PlacementLog, SeedScenarioMatchesTheGoldenLog) {
  std::ifstream golden(kSource / "tests/golden/seed_device_placement.log");
  std::stringstream expected;
  expected << golden.rdbuf();
  EXPECT_EQ(seed_log(seed().run.tensorflow_version) + "\n", expected.str());
}

// Names follow one release: up to 1.3 "/gpu:0" and "/cpu:0" (device mapping included), from 1.4
// "/device:GPU:0" and "/device:CPU:0"; never both in one log.
TEST(PlacementLog, DeviceNamesFollowTheChosenVersion) {
  const std::string old_log = seed_log(TensorFlowVersion{3});
  EXPECT_EQ(old_log.rfind("Device mapping:\n/job:localhost/replica:0/task:0/gpu:0 -> device: 0, name: GeForce GTX 850M", 0),
            0u)
      << old_log;
  EXPECT_EQ(old_log.find("/device:"), std::string::npos) << old_log;
  for (int minor : {4, 15}) {
    const std::string log = seed_log(TensorFlowVersion{minor});
    EXPECT_NE(log.find("add: (Add): /job:localhost/replica:0/task:0/device:GPU:0\n"), std::string::npos) << log;
    EXPECT_EQ(log.find("/cpu:"), std::string::npos) << log;
    EXPECT_EQ(log.find("/gpu:"), std::string::npos) << log;
  }
}

TEST(PlacementLog, TheScenarioChoosesTheVersion) {
  EXPECT_EQ(to_string(seed().run.tensorflow_version), "1.4");  // the default
  EXPECT_EQ(parse_tensorflow_version("1.15")->minor, 15);
  EXPECT_FALSE(parse_tensorflow_version("2.0"));
  EXPECT_FALSE(parse_tensorflow_version("1.4.0"));
  const std::vector<std::string> names = tensorflow_version_names();
  EXPECT_EQ(names.front(), "1.0");
  EXPECT_EQ(names.back(), "1.15");
}

OpGraph two_constants_and_add(const std::string& a, const std::string& b, const std::string& add) {
  OpGraph graph;
  auto op = [&](const std::string& name, const std::string& type) {
    Op made;
    made.name = name;
    made.type = type;
    made.output_bytes = 12;
    return graph.add_op(made);
  };
  const OpId x = op(a, "Const"), y = op(b, "Const"), sum = op(add, "Add");
  graph.add_edge(x, sum);
  graph.add_edge(y, sum);
  return graph;
}

// Two more published logs of `c = a + b` on two constants:
//  - github.com/sanjin145/KaggleCode, tensorflow_study/gpu_test.py (TF <= 1.3, "/cpu:0"):
//      add: (Add) / b: (Const) / a: (Const)
//    stack: ready [a b]; pop b, pop a -> add ready; pop add. Ids b, a, add; generators b, a last.
//  - github.com/snkey-todo/MachineLearning, TF-TensorFlow/log_device_placement.py
//    ("/device:CPU:0", so 1.4 or later): Add: (Add) / Const: (Const) / Const_1: (Const)
//    GraphDef order (1.12 and later): ids Const, Const_1, Add; the stack would give Const_1 first.
TEST(PlacementLogOrder, TwoConstantsAndAnAddAsPublished) {
  EXPECT_EQ(names_in_log_order(two_constants_and_add("a", "b", "add"), NodeIdOrder::kReadyStack),
            (std::vector<std::string>{"add", "b", "a"}));
  EXPECT_EQ(names_in_log_order(two_constants_and_add("Const", "Const_1", "Add"), NodeIdOrder::kGraphDefOrder),
            (std::vector<std::string>{"Add", "Const", "Const_1"}));
}

TEST(PlacementLogOrder, GeneratorsAreOpsWithoutDataInputsThatOutputOneNonReference) {
  const Scenario scenario = seed();
  const OpGraph& graph = scenario.graph;
  EXPECT_TRUE(is_generator(graph, graph.find("Const")));
  EXPECT_FALSE(is_generator(graph, graph.find("a")));     // VariableV2: a reference
  EXPECT_FALSE(is_generator(graph, graph.find("init")));  // NoOp: no output
  EXPECT_FALSE(is_generator(graph, graph.find("add")));
}

std::filesystem::path write_scenario(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

// Data parallelism logs every replica's ops, as in-graph replication's towers are logged: each op
// once per replica as "tower_<r>/<op>" on replica r's device.
TEST(PlacementLog, DataParallelLogsEveryReplicasOps) {
  const std::filesystem::path file = write_scenario("placesim_tflog_dp.json", R"({
    "model": {"zoo": "tf_add_variables", "parameters": {"shape": [4, 4]}},
    "cluster": {"template": "workstation_2gpu"},
    "strategy": {"data_parallel": {"replicas": ["/gpu:0", "/gpu:1"]}},
    "run": {"mode": "inference", "log_device_placement": true}
  })");
  const Scenario scenario = load_scenario(file, catalog());
  const std::string log = strategy_placement_log(scenario, scenario.strategies.front(), Placement{});
  const std::vector<std::string> lines = op_lines(log);
  EXPECT_EQ(lines.size(), 2 * scenario.graph.size()) << log;
  for (int replica = 0; replica < 2; ++replica) {
    const std::string tower = "tower_" + std::to_string(replica) + "/";
    const std::string device = "/job:localhost/replica:0/task:0/device:GPU:" + std::to_string(replica);
    for (OpId id = 0; id < scenario.graph.size(); ++id) {
      const Op& op = scenario.graph.op(id);
      const std::string line = tower + op.name + ": (" + op.type + "): " + device;
      EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end()) << line << " in\n" << log;
    }
  }
  std::filesystem::remove(file);
}

// With parameter servers the variables (with their read, Assign and initial value) are made
// once, on their server; the towers' ops read them.
TEST(PlacementLog, DataParallelWithParameterServersLogsVariablesOnce) {
  const std::filesystem::path file = write_scenario("placesim_tflog_ps.json", R"({
    "model": {"zoo": "tf_add_variables", "parameters": {"shape": [4, 4]}},
    "cluster": {"template": "workstation_2gpu"},
    "strategy": {"data_parallel": {"replicas": ["/gpu:0", "/gpu:1"], "aggregation": "parameter_server",
                                   "ps_devices": ["/cpu:0"]}},
    "run": {"mode": "inference"}
  })");
  const Scenario scenario = load_scenario(file, catalog());
  const std::string log = strategy_placement_log(scenario, scenario.strategies.front(), Placement{});
  const std::string cpu = "/job:localhost/replica:0/task:0/device:CPU:0";
  for (const char* shared : {"a: (VariableV2): ", "a/read: (Identity): ", "a/Assign: (Assign): ", "Const: (Const): ",
                             "b: (VariableV2): ", "Const_1: (Const): "}) {
    EXPECT_NE(log.find("\n" + std::string(shared) + cpu + "\n"), std::string::npos) << shared << " in\n" << log;
  }
  for (const char* per_tower : {"tower_0/add: (Add): /job:localhost/replica:0/task:0/device:GPU:0",
                                "tower_1/add: (Add): /job:localhost/replica:0/task:0/device:GPU:1",
                                "tower_1/init: (NoOp): /job:localhost/replica:0/task:0/device:GPU:1"}) {
    EXPECT_NE(log.find(per_tower), std::string::npos) << per_tower << " in\n" << log;
  }
  EXPECT_EQ(log.find("tower_0/a: "), std::string::npos) << log;
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace placesim
