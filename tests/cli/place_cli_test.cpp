// `placesim place`: the bundled automatic-placement scenario prints its placement log and one row
// per algorithm with a predicted step time, every placement within the memory limit; a model that
// fits nowhere is a verdict (exit status 2) naming the op and its memory.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "run_placesim.h"

namespace placesim {
namespace {

using placesim::testing::run_placesim;

TEST(PlaceCommand, ComparesEveryAlgorithmOnTheBundledScenario) {
  auto result = run_placesim({"place", "scenarios/auto_placement_inception.json"});
  ASSERT_EQ(result.exit_status, 0) << result.output;
  EXPECT_NE(result.output.find("Placement log (m-sct):\nDevice mapping:\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Mixed_7c/concat: (ConcatV2): /job:localhost/replica:0/task:0/"), std::string::npos);
  for (const char* algorithm : {"\nexpert ", "\nm-topo ", "\nm-etf ", "\nm-sct "}) {
    size_t row = result.output.find(algorithm);
    ASSERT_NE(row, std::string::npos) << algorithm << "\n" << result.output;
    // A step time ("683.768 ms", "1.146 s") right after the algorithm's name.
    EXPECT_TRUE(std::regex_search(result.output.substr(row, 40), std::regex(R"(^\n[a-z-]+ +[0-9]+\.[0-9]+ m?s )")))
        << result.output.substr(row, 200);
  }
  EXPECT_EQ(result.output.find("no placement"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("OUT OF MEMORY"), std::string::npos) << result.output;
}

TEST(PlaceCommand, AModelThatFitsNowhereIsAVerdict) {
  auto result = run_placesim({"place", "tests/bad_inputs/scenario/auto_placement_does_not_fit.json", "--no-log"});
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_NE(result.output.find("error: tests/bad_inputs/scenario/auto_placement_does_not_fit.json: "
                               "/strategy/placement/auto: m-ETF found no device with room for op \"fc1/MatMul\""),
            std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace placesim
