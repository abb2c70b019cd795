// Where a planner's SpecError points in the user's files (sim/scenario/spec_error_location.h):
// the strategy's entry in "strategies", the run options at the top level, an op's own device in
// the model file, a sweep variant's value in its list.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/spec_error_location.h"

namespace placesim {
namespace {

const std::filesystem::path kSourceTree = PLACESIM_SOURCE_DIR;

Scenario two_strategies() {
  static const Json document = Json::parse(R"({
    "model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100"},
    "strategies": [{"name": "one GPU"}, {"name": "rules", "placement": {"rules": [
      {"ops": ["a*", "b*"], "device": "/gpu:0"}, {"ops": "dense*", "device": "/gpu:1"}]}}]})");
  static const HardwareCatalog catalog(kSourceTree / "hardware_profiles");
  return read_scenario(JsonReader(document, "two.json"), catalog, kSourceTree);
}

TEST(SpecErrorLocation, AStrategyOptionIsUnderItsEntryInTheStrategies) {
  const Scenario scenario = two_strategies();
  const Strategy& rules = scenario.strategies[1];
  // Two op patterns of rule 0 and one of rule 1: each knows the rule it came from.
  ASSERT_EQ(rules.placement.rules.size(), 3u);
  EXPECT_EQ(rules.placement.rules[1].index, 0u);
  EXPECT_EQ(rules.placement.rules[2].index, 1u);
  const InputError error =
      locate_spec_error(scenario, rules, SpecError::strategy("placement/rules/1/device", "no device matches"));
  EXPECT_EQ(error.file(), "two.json");
  EXPECT_EQ(error.json_path(), "/strategies/1/placement/rules/1/device");
  EXPECT_EQ(error.message(), "no device matches");
  // A strategy derived from one of the scenario's (a one-replica baseline) keeps its name.
  Strategy derived = scenario.strategies[0];
  EXPECT_EQ(locate_spec_error(scenario, derived, SpecError::strategy("parallelism/tensor", "x")).json_path(),
            "/strategies/0/parallelism/tensor");
}

TEST(SpecErrorLocation, RunOptionsAndOpDevicesAreWhereTheFileHasThem) {
  Scenario scenario = two_strategies();
  EXPECT_EQ(locate_spec_error(scenario, scenario.strategies[0], SpecError::run("simulation/symmetry", "x")).json_path(),
            "/simulation/symmetry");
  EXPECT_EQ(locate_spec_error(scenario, scenario.strategies[0], SpecError::op_device(3, "x")).json_path(),
            "/model/ops/3/device");
  scenario.graph_file = "model.json";
  scenario.graph_ops_path = "/ops";
  const InputError in_file = locate_spec_error(scenario, scenario.strategies[0], SpecError::op_device(3, "x"));
  EXPECT_EQ(in_file.file(), "model.json");
  EXPECT_EQ(in_file.json_path(), "/ops/3/device");
}

TEST(SpecErrorLocation, AValueFromASweepListIsNamedInItsList) {
  Scenario scenario = two_strategies();
  scenario.strategy_sources["one GPU"] = {"/sweep/strategies/2", {{"parallelism/tensor", "/sweep/strategies/2/parallelism/tensor/1"}}};
  EXPECT_EQ(locate_spec_error(scenario, scenario.strategies[0], SpecError::strategy("parallelism/tensor", "x")).json_path(),
            "/sweep/strategies/2/parallelism/tensor/1");
  EXPECT_EQ(locate_spec_error(scenario, scenario.strategies[0], SpecError::strategy("parallelism/pipeline", "x")).json_path(),
            "/sweep/strategies/2/parallelism/pipeline");
}

}  // namespace
}  // namespace placesim
