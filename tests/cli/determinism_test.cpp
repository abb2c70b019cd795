// The same scenario and seed give byte-identical reports and traces from run to run
// (docs/reliability.md, "Determinism"). Each run happens in its own fresh directory with the same
// command line, so nothing but the simulation itself can make the files differ. (`--jobs` does not
// exist yet; when it does, these runs should also vary it.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::make_temp_directory;
using placesim::testing::run_placesim;

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

struct Outputs {
  std::string report, trace;
};

// `placesim run SCENARIO EXTRA... --report report.json --trace trace.json` in a fresh directory.
Outputs run_once(const std::string& scenario, const std::vector<std::string>& extra) {
  std::filesystem::path directory = make_temp_directory();
  std::vector<std::string> arguments{"run", "--quiet", (std::filesystem::path(PLACESIM_SOURCE_DIR) / scenario).string()};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  for (const char* flag : {"--report", "report.json", "--trace", "trace.json"}) arguments.push_back(flag);
  auto result = run_placesim(arguments, directory);
  EXPECT_EQ(result.exit_status, 0) << result.output;
  Outputs outputs{read_bytes(directory / "report.json"), read_bytes(directory / "trace.json")};
  std::filesystem::remove_all(directory);
  return outputs;
}

void expect_identical_runs(const std::string& scenario, const std::vector<std::string>& extra = {}) {
  Outputs first = run_once(scenario, extra);
  Outputs second = run_once(scenario, extra);
  ASSERT_FALSE(first.report.empty());
  ASSERT_FALSE(first.trace.empty());
  // EXPECT_TRUE, not EXPECT_EQ: a mismatch should not print two whole traces.
  EXPECT_TRUE(first.report == second.report) << "the reports differ";
  EXPECT_TRUE(first.trace == second.trace) << "the traces differ";
}

TEST(DeterminismTest, SeedScenarioGivesByteIdenticalReportAndTrace) {
  expect_identical_runs("scenarios/seed_device_placement.json");
}

TEST(DeterminismTest, DataParallelRingAllReduceGivesByteIdenticalReportAndTrace) {
  expect_identical_runs("scenarios/data_parallel_resnet50_dgx1.json", {"--strategy", "sync all-reduce ring"});
}

}  // namespace
}  // namespace placesim
