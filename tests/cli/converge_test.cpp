// `placesim converge` end to end (docs/convergence.md): a small straggler scenario simulated
// and replayed, its three output files, and its input errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

// Four V100s, the last at half speed; a small MLP so the simulation takes milliseconds.
const char* const kScenario = R"({
  "name": "tiny_converge",
  "model": {"zoo": "mlp", "parameters": {"input": 256, "hidden": [1024], "output": 10}},
  "cluster": {"template": "dgx1_v100"},
  "perturbations": {"device_speed": [{"device": "/gpu:3", "factor": 0.5}]},
  "strategies": [
    {"name": "sync", "data_parallel": {"replicas": 4, "mode": "sync"}},
    {"name": "async", "data_parallel": {"replicas": 4, "mode": "async", "ps_devices": ["/cpu:0"]}}
  ],
  "run": {"batch_size": 256, "steps": 4, "seed": 3},
  "convergence": {"problem": "logistic", "samples": 1024, "evaluation_samples": 256, "features": 8,
                  "batch_per_worker": 16, "learning_rate": 0.2, "target_loss": 0.5, "max_gradients": 400,
                  "remedies": {"staleness_learning_rate": true, "bounded_staleness": [0], "backup_workers": [1]}}
})";

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class ConvergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = make_temp_directory();
    std::ofstream(directory_ / "scenario.json") << kScenario;
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::filesystem::path directory_;
};

TEST_F(ConvergeTest, ReportsEveryStrategyAndRemedyAndWritesTheThreeFiles) {
  const std::filesystem::path out = directory_ / "out";
  auto result = run_placesim({"converge", (directory_ / "scenario.json").string(), "--output-dir", out.string()});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  for (const char* expected : {"sync", "async", "1 backup worker", "lr / staleness", "bounded staleness 0",
                               "sequential SGD", "Verdict", "time to target"}) {
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << " in\n" << result.output;
  }
  auto json = nlohmann::json::parse(read(out / "convergence.json"));
  ASSERT_EQ(json["runs"].size(), 5u);  // sync: as simulated, 1 backup; async: as simulated, lr, bound 0
  EXPECT_EQ(json["runs"][0]["variant"], "as simulated");
  EXPECT_EQ(json["runs"][1]["variant"], "1 backup worker");
  // GPU:3 is the straggler: dropping its gradient shortens the simulated sync step.
  EXPECT_LT(json["runs"][1]["seconds_per_update"].get<double>(), json["runs"][0]["seconds_per_update"].get<double>());
  EXPECT_EQ(json["runs"][2]["mode"], "async");
  EXPECT_GT(json["runs"][2]["staleness"]["mean"].get<double>(), 0.0);

  const std::string csv = read(out / "convergence.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "strategy,variant,mode,update,gradients,applied_gradients,simulated_seconds,version_read,staleness,loss,accuracy");
  EXPECT_NE(csv.find("\"async\",\"as simulated\",async,400,400,400,"), std::string::npos) << "the last async update";

  const std::string html = read(out / "convergence.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "self-contained, no script";
}

TEST_F(ConvergeTest, IsDeterministic) {
  auto first = run_placesim({"converge", (directory_ / "scenario.json").string(), "-q", "--output-dir",
                             (directory_ / "a").string()});
  auto second = run_placesim({"converge", (directory_ / "scenario.json").string(), "-q", "--output-dir",
                              (directory_ / "b").string()});
  ASSERT_EQ(first.exit_status, 0) << first.output;
  ASSERT_EQ(second.exit_status, 0) << second.output;
  EXPECT_EQ(read(directory_ / "a" / "convergence.csv"), read(directory_ / "b" / "convergence.csv"));
}

TEST_F(ConvergeTest, NeedsADataParallelStrategy) {
  std::ofstream(directory_ / "single.json") << R"({
    "model": {"zoo": "mlp", "parameters": {"input": 16, "hidden": [16], "output": 2}},
    "cluster": {"template": "dgx1_v100"},
    "strategy": {"placement": {"rules": [{"ops": "*", "device": "/gpu:0"}]}}
  })";
  auto result = run_placesim({"converge", (directory_ / "single.json").string()});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_NE(result.output.find("/strategy: converge needs a strategy with \"data_parallel\""), std::string::npos)
      << result.output;
}

// PipeDream's replicated stages update each stage at its own rate: replayed beside data
// parallelism, with each stage's replicas and staleness noted; on the one-layer logistic problem
// (no layers to spread over stages) left out with a note, as plain PipeDream is.
TEST_F(ConvergeTest, ReplaysReplicatedStagesBesideDataParallelism) {
  const std::string scenario = R"({
    "model": {"zoo": "mlp", "parameters": {"input": 64, "hidden": [64, 64], "output": 10}},
    "cluster": {"template": "dgx1_v100"},
    "strategies": [
      {"name": "sync", "data_parallel": {"replicas": 3}},
      {"name": "2-1", "parallelism": {"pipeline": 2, "stage_replicas": [2, 1], "schedule": "pipedream"}}
    ],
    "run": {"batch_size": 32, "steps": 2},
    "convergence": {"problem": "PROBLEM", "samples": 256, "evaluation_samples": 64, "features": 8,
                    "batch_per_worker": 16, "target_loss": 0.6, "max_gradients": 50}
  })";
  auto with_problem = [&](const std::string& problem) {
    std::string text = scenario;
    text.replace(text.find("PROBLEM"), 7, problem);
    return text;
  };
  std::ofstream(directory_ / "stages.json") << with_problem("mlp");
  auto result = run_placesim({"converge", (directory_ / "stages.json").string()});
  EXPECT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("\n2-1 "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("note: 2-1: PipeDream's replicated stages 2-1: layer 0 on stage 0 (2 replicas, "
                               "staleness 1), layer 1 on stage 1 (1 replica, staleness 0)"),
            std::string::npos)
      << result.output;
  std::ofstream(directory_ / "logistic.json") << with_problem("logistic");
  auto logistic = run_placesim({"converge", (directory_ / "logistic.json").string()});
  EXPECT_EQ(logistic.exit_status, 0) << logistic.output;
  EXPECT_NE(logistic.output.find("note: 2-1: PipeDream's stages need a problem with layers"), std::string::npos)
      << logistic.output;
}

// A replicated stage without weights (here the loss alone) has no updates to replay: refused
// with the strategy's path, exit 2.
TEST_F(ConvergeTest, RefusesAReplicatedStageWithoutWeights) {
  std::ofstream(directory_ / "weightless.json") << R"({
    "model": {"zoo": "mlp", "parameters": {"input": 64, "hidden": [64, 64], "output": 10}},
    "cluster": {"template": "dgx1_v100"},
    "strategy": {"parallelism": {"pipeline": 2, "stage_replicas": [2, 1], "schedule": "pipedream",
                                 "stage_ops": [["input*", "fc*", "logits*"], ["loss*"]]}},
    "run": {"batch_size": 32, "steps": 2},
    "convergence": {"problem": "mlp", "samples": 256, "evaluation_samples": 64, "features": 8, "max_gradients": 50}
  })";
  auto result = run_placesim({"converge", (directory_ / "weightless.json").string()});
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_NE(result.output.find("/strategy/parallelism/stage_replicas: converge replays each replicated stage's "
                               "updates, but stage 1 holds no weights"),
            std::string::npos)
      << result.output;
}

TEST_F(ConvergeTest, AMissingOutputParentIsRefusedBeforeAnyWork) {
  auto result = run_placesim({"converge", (directory_ / "scenario.json").string(), "--output-dir",
                              (directory_ / "no" / "such").string()});
  EXPECT_EQ(result.exit_status, 2);
  EXPECT_NE(result.output.find("error: --output-dir: cannot create"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("simulating"), std::string::npos) << "no simulation before the check";
}

}  // namespace
}  // namespace placesim
