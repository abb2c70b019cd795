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

/// The bundled 3D scenario with its "simulation" block replaced: the tier alone (symmetry would
/// hold the analytical tier's plan to ring all-reduces, which the closed form is not: its data
/// groups of two machines take NCCL's tree).
std::filesystem::path with_simulation(const std::filesystem::path& directory, const std::string& tier) {
  nlohmann::json scenario = read_json(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/gpt_3d_parallel_dgx.json");
  scenario["simulation"] = {{"tier", tier}};
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
  // 1F1B keeps min(M, p - s) micro-batches in flight on stage s: the first stage holds the most.
  for (size_t s = 0; s < 64; ++s) {
    const auto& stage = strategy["stages"][s];
    EXPECT_EQ(stage["micro_batches_in_flight"].get<int64_t>(), static_cast<int64_t>(64 - s));
    EXPECT_GT(stage["peak_memory_bytes"].get<double>(), 0);
    EXPECT_LE(stage["peak_memory_bytes"].get<double>(), stage["memory_capacity_bytes"].get<double>());
    EXPECT_FALSE(stage["out_of_memory"].get<bool>());
  }
  EXPECT_GT(strategy["stages"][0]["peak_memory_bytes"].get<double>(),
            strategy["stages"][63]["peak_memory_bytes"].get<double>());
  auto checked = run_placesim({"check", "scenarios/gpt_1t_3072_gpus_closed_form.json"});
  EXPECT_EQ(checked.exit_status, 0) << checked.output;
  EXPECT_NE(checked.output.find("fullest stage 0: "), std::string::npos) << checked.output;
  std::filesystem::remove_all(outputs);
}

// The closed-form tier says where its costs come from, as the other tiers do: the bundled Mixtral
// scenario on H100s names the kernel model, its fused attention fit and the sustained clock
// (0.842 of a burst's rate: 708.5 / 841.9 TFLOPS, hardware_profiles/devices/h100-sxm5-80gb.json),
// in the text and in the JSON report's compute_costs.
TEST(TiersCli, TheClosedFormTierSaysWhereItsCostsComeFrom) {
  std::filesystem::path outputs = make_temp_directory();
  auto result = run_placesim({"run", "scenarios/mixtral_8x7b_dgx_h100.json", "--report", (outputs / "report.json").string()});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("Compute costs (docs/cost-model.md"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("  h100-sxm5-80gb: kernel model ("), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("; fused attention: flash2 fitted on"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("; bf16 tensor-core kernels at 0.842 of a burst's rate"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("; bf16 GEMMs at most 708.5 TFLOP/s"), std::string::npos) << result.output;
  const nlohmann::json report = read_json(outputs / "report.json");
  bool found = false;
  for (const auto& entry : report.at("compute_costs")) {
    if (entry.at("profile") != "h100-sxm5-80gb") continue;
    found = true;
    EXPECT_NEAR(entry.at("sustained_fraction").get<double>(), 708.5 / 841.9, 1e-15);
    EXPECT_DOUBLE_EQ(entry.at("matmul_ceiling_flops_per_second").get<double>(), 708.5e12);
    EXPECT_EQ(entry.at("fused_attention").at("implementation"), "flash2");
  }
  EXPECT_TRUE(found);
  std::filesystem::remove_all(outputs);
}

// The same 1T model on 40 GB A100s does not fit (stage 0 holds 64 micro-batches' checkpoints):
// the closed-form tier refuses it like the other tiers, naming each stage, unless --allow-oom.
TEST(TiersCli, TheClosedFormTierRefusesAConfigurationThatDoesNotFit) {
  std::filesystem::path outputs = make_temp_directory();
  std::ifstream in(std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios/gpt_1t_3072_gpus_closed_form.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"dgx_a100_80gb\"";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"dgx_a100\"");
  const std::filesystem::path scenario = outputs / "gpt_1t_40gb.json";
  std::ofstream(scenario) << text;
  auto refused = run_placesim({"run", scenario.string()});
  EXPECT_EQ(refused.exit_status, 2) << refused.output;
  EXPECT_NE(refused.output.find("does not fit in memory: stage 0 (GPU:0 and every device of the stage) needs "),
            std::string::npos)
      << refused.output;
  auto reported = run_placesim({"run", "--allow-oom", scenario.string()});
  EXPECT_EQ(reported.exit_status, 0) << reported.output;
  EXPECT_NE(reported.output.find("OUT OF MEMORY"), std::string::npos) << reported.output;
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
