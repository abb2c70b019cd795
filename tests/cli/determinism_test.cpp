// The same scenario and seed give byte-identical reports and traces from run to run
// (docs/reliability.md, "Determinism"). Each run happens in its own fresh directory with the same
// command line, so nothing but the simulation itself can make the files differ. (`--jobs` does not
// exist yet; when it does, these runs should also vary it.)
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::ReportAndTrace;
using placesim::testing::run_report_and_trace;

void expect_identical_runs(const std::string& scenario, const std::vector<std::string>& extra = {}) {
  const ReportAndTrace first = run_report_and_trace(scenario, extra);
  const ReportAndTrace second = run_report_and_trace(scenario, extra);
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
