// `placesim calibrate --board-gemm-kernels TABLE --device ID -o PROFILE.json` as a user runs it:
// the refitted efficiency and the held-out errors printed, the profile and the predictions
// written; bad command lines exit 2. The fit itself: tests/sim/calibration/board_gemm_calibration_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/cli/run_placesim.h"

namespace placesim {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::make_temp_directory;
using testing::run_placesim;

const fs::path kTable = fs::path(PLACESIM_SOURCE_DIR) / "hardware_profiles/kernels/llmcompass_a100-sxm4-80gb.csv";

/// The profile's gemm_efficiency "bf16" value (the only `"bf16": number` in an A100 profile).
double bf16_efficiency(const fs::path& profile) {
  std::ifstream in(profile);
  std::stringstream text;
  text << in.rdbuf();
  std::smatch match;
  const std::string content = text.str();
  if (!std::regex_search(content, match, std::regex(R"("bf16": ([0-9.eE+-]+))"))) return -1;
  return std::stod(match[1].str());
}

// The shipped A100 SXM4 80 GB profile refitted on the table it names gives its own 16-bit
// efficiency back; the output says what was borrowed, what was fitted and how well each predicts
// the rows held out.
TEST(CalibrateBoardGemmCli, RefitsTheShippedModuleAndSaysBeforeAndAfter) {
  const fs::path directory = make_temp_directory();
  const fs::path profile = directory / "a100-sxm4-80gb.json";
  const fs::path predictions = directory / "rows.csv";
  const CommandResult ok =
      run_placesim({"calibrate", "--board-gemm-kernels", kTable.string(), "--device", "a100-sxm4-80gb", "-o",
                    profile.string(), "--predictions", predictions.string()});
  ASSERT_EQ(ok.exit_status, 0) << ok.output;
  EXPECT_NE(ok.output.find("GEMM efficiency of a100-sxm4-80gb on its own rows (the rest of its kernel model stays "
                           "a100-pcie-80gb's)"),
            std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("fp16/bf16 "), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("15 rows fitted"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("gemm                5 rows"), std::string::npos) << ok.output;

  const double shipped = bf16_efficiency(fs::path(PLACESIM_SOURCE_DIR) / "hardware_profiles/devices/a100-sxm4-80gb.json");
  EXPECT_GT(shipped, 0.5);
  EXPECT_NEAR(bf16_efficiency(profile), shipped, 1e-6);
  std::ifstream rows(predictions);
  int lines = 0;
  for (std::string line; std::getline(rows, line);) ++lines;
  EXPECT_EQ(lines, 1 + 20);  // header + LLMCompass's 20 BF16 GEMMs
  fs::remove_all(directory);
}

TEST(CalibrateBoardGemmCli, BadCommandLinesExitTwoWithTheReason) {
  const fs::path directory = make_temp_directory();
  const std::string out = (directory / "p.json").string();
  const CommandResult own_fit =
      run_placesim({"calibrate", "--board-gemm-kernels", kTable.string(), "--device", "v100-sxm2-16gb", "-o", out});
  EXPECT_EQ(own_fit.exit_status, 2);
  EXPECT_NE(own_fit.output.find("refit it with --from-kernels"), std::string::npos) << own_fit.output;
  const CommandResult no_device = run_placesim({"calibrate", "--board-gemm-kernels", kTable.string(), "-o", out});
  EXPECT_EQ(no_device.exit_status, 2);
  EXPECT_NE(no_device.output.find("--board-gemm-kernels needs --device ID"), std::string::npos) << no_device.output;
  const CommandResult other_board =
      run_placesim({"calibrate", "--board-gemm-kernels", kTable.string(), "--device", "h200-sxm-141gb", "-o", out});
  EXPECT_EQ(other_board.exit_status, 2);
  EXPECT_NE(other_board.output.find("no GEMM rows of device \"h200-sxm-141gb\""), std::string::npos)
      << other_board.output;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(directory);
}

}  // namespace
}  // namespace placesim
