// `placesim run` on a placement that does not fit: exit status 2 with a verdict naming the device
// and the memory breakdown, unless --allow-oom asks for the report anyway.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

bool mentions(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// GPT-2 small (124 M parameters) trained in fp32 with Adam needs 16 bytes per parameter, about
// 1.9 GB, before any activation: more than the laptop GPU's 2 GiB once activations are added.
std::filesystem::path write_too_big_scenario(const std::filesystem::path& directory) {
  std::filesystem::path file = directory / "too_big.json";
  std::ofstream(file) << R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 12, "hidden": 768, "heads": 12, "sequence": 1024}},
    "cluster": {"template": "laptop_gtx850m"},
    "run": {"batch_size": 8, "optimizer": "adam"}
  })";
  return file;
}

TEST(MemoryVerdictCli, RunFailsWithTheVerdictWhenThePlacementDoesNotFit) {
  std::filesystem::path directory = make_temp_directory();
  std::filesystem::path scenario = write_too_big_scenario(directory);
  auto result = run_placesim({"run", scenario.string()});
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_TRUE(mentions(result.output, "does not fit in memory: GPU:0 needs ")) << result.output;
  EXPECT_TRUE(mentions(result.output, ", has 2.0 GiB: activations ")) << result.output;
  EXPECT_TRUE(mentions(result.output, "optimizer state")) << result.output;
  EXPECT_TRUE(mentions(result.output, "--allow-oom")) << result.output;

  auto allowed = run_placesim({"run", "--allow-oom", scenario.string()});
  EXPECT_EQ(allowed.exit_status, 0) << allowed.output;
  EXPECT_TRUE(mentions(allowed.output, "OUT OF MEMORY")) << allowed.output;
  EXPECT_TRUE(mentions(allowed.output, "Memory at peak:")) << allowed.output;
  std::filesystem::remove_all(directory);
}

TEST(MemoryVerdictCli, BundledPipelineScenarioRunsAndReportsTheBubble) {
  auto result = run_placesim({"run", "scenarios/pipeline_gpt_dgx1.json"});
  EXPECT_EQ(result.exit_status, 0) << result.output;
  EXPECT_TRUE(mentions(result.output, "Pipeline: 4 stages x 8 micro-batches (gpipe): bubble ")) << result.output;
  EXPECT_TRUE(mentions(result.output, "Pipeline: 4 stages x 8 micro-batches (1f1b): bubble ")) << result.output;
}

}  // namespace
}  // namespace placesim
