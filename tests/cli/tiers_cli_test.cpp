// `"simulation": {"tier": ...}` on the command line: the bundled closed-form scenario (GPT 1T on
// 3,072 GPUs) runs and reports every stage; the analytical and closed-form tiers give one step
// time for the bundled 3D scenario; a closed-form run refuses a trace it cannot have.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// The bundled 3D scenario with its "simulation" block replaced.
std::filesystem::path with_simulation(const std::filesystem::path& directory, const std::string& tier) {
  nlohmann::json scenario = read_json(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/gpt_3d_parallel_dgx.json");
  scenario["simulation"] = {{"tier", tier}, {"symmetry", "representatives"}};
  std::filesystem::path path = directory / (tier + ".json");
  std::ofstream(path) << scenario.dump();
  return path;
}

TEST(TiersCli, TheBundledClosedFormScenarioReportsEveryStage) {
  std::filesystem::path outputs = make_temp_directory();
  auto result = run_placesim({"run", "scenarios/gpt_1t_3072_gpus_closed_form.json", "--report",
                              (outputs / "report.json").string()});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("closed-form tier"), std::string::npos) << result.output;
  const nlohmann::json report = read_json(outputs / "report.json");
  EXPECT_EQ(report["tier"], "closed-form");
  const nlohmann::json& strategy = report["strategies"][0];
  EXPECT_EQ(strategy["stages"].size(), 64u);
  EXPECT_EQ(strategy["samples_per_step"].get<double>(), 3072.0);
  // Every stage's last task ends by the step's end; one of them at it.
  double latest = 0;
  for (const auto& stage : strategy["stages"]) {
    EXPECT_GT(stage["backward_slot_seconds"].get<double>(), stage["forward_slot_seconds"].get<double>());
    latest = std::max(latest, stage["end_seconds"].get<double>());
  }
  EXPECT_EQ(latest, strategy["step_time_seconds"].get<double>());
  std::filesystem::remove_all(outputs);
}

TEST(TiersCli, AnalyticalAndClosedFormGiveOneStepTime) {
  std::filesystem::path outputs = make_temp_directory();
  for (const std::string tier : {"analytical", "closed-form"}) {
    auto result = run_placesim({"run", "--quiet", with_simulation(outputs, tier).string(), "--report",
                                (outputs / (tier + "-report.json")).string()});
    ASSERT_EQ(result.exit_status, 0) << tier << ": " << result.output;
  }
  const nlohmann::json analytical = read_json(outputs / "analytical-report.json");
  const nlohmann::json closed_form = read_json(outputs / "closed-form-report.json");
  EXPECT_EQ(analytical["timeline_source"], "analytical");
  const double step = analytical["step_time_seconds"].get<double>();
  EXPECT_NEAR(closed_form["strategies"][0]["step_time_seconds"].get<double>(), step, 1e-12 * step);
  std::filesystem::remove_all(outputs);
}

TEST(TiersCli, ClosedFormRefusesATrace) {
  std::filesystem::path outputs = make_temp_directory();
  auto result = run_placesim({"run", "scenarios/gpt_1t_3072_gpus_closed_form.json", "--trace",
                              (outputs / "trace.json").string()});
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_NE(result.output.find("--trace"), std::string::npos) << result.output;
  EXPECT_FALSE(std::filesystem::exists(outputs / "trace.json"));
  std::filesystem::remove_all(outputs);
}

}  // namespace
}  // namespace placesim
