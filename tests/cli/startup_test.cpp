// Start-up (docs/performance.md): a simulating command loads SimGrid through placesim's module,
// with stubs in place of the ns-3 libraries SimGrid needs but placesim never uses (scripts/
// make_ns3_stubs.sh). The stubs must be what the dynamic loader takes, and must change nothing:
// the same reports and traces as with the real ns-3 (PLACESIM_SIMGRID_NS3=1).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::ReportAndTrace;
using placesim::testing::run_placesim;
using placesim::testing::run_report_and_trace;

bool built_with_ns3_stubs() { return std::filesystem::is_directory(std::filesystem::path(PLACESIM_BINARY).parent_path() / "ns3-stubs"); }

/// Sets an environment variable for the commands this test runs; restores it after.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnvironment() { old_.empty() ? ::unsetenv(name_) : ::setenv(name_, old_.c_str(), 1); }

 private:
  const char* name_;
  std::string old_;
};

/// The report and trace of `placesim run SCENARIO EXTRA...`, concatenated.
std::string report_and_trace(const std::string& scenario, const std::vector<std::string>& extra) {
  const ReportAndTrace files = run_report_and_trace(scenario, extra);
  return files.report + files.trace;
}

TEST(Startup, SimulatingLoadsTheNs3StubsAndNoNs3Library) {
  if (!built_with_ns3_stubs()) GTEST_SKIP() << "built without ns-3 stubs (PLACESIM_NS3_STUBS=OFF or SimGrid without ns-3)";
  ScopedEnvironment debug("LD_DEBUG", "files");  // the dynamic loader names each library it initialises
  auto result = run_placesim({"check", "scenarios/seed_device_placement.json"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::istringstream lines(result.output);
  size_t stubs = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("calling init:") == std::string::npos || line.find("libns3-") == std::string::npos) continue;
    EXPECT_NE(line.find("/ns3-stubs/libns3-"), std::string::npos) << "a real ns-3 library was loaded: " << line;
    ++stubs;
  }
  EXPECT_GT(stubs, 0u) << "no ns-3 stub was initialised: does check still simulate the seed?\n" << result.output;
}

TEST(Startup, Ns3StubsGiveTheSameReportsAndTracesAsNs3) {
  for (const auto& [scenario, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"scenarios/seed_device_placement.json", {}},
           {"scenarios/data_parallel_resnet50_dgx1.json", {"--strategy", "sync all-reduce ring"}}}) {
    const std::string with_stubs = report_and_trace(scenario, extra);
    std::string with_ns3;
    {
      ScopedEnvironment real("PLACESIM_SIMGRID_NS3", "1");
      with_ns3 = report_and_trace(scenario, extra);
    }
    ASSERT_FALSE(with_stubs.empty()) << scenario;
    EXPECT_TRUE(with_stubs == with_ns3) << scenario << ": the outputs differ";  // not EXPECT_EQ: two whole traces
  }
}

}  // namespace
}  // namespace placesim
