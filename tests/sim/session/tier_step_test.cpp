// evaluate_on_tier (sim/session/tier_step.h): the one step reading of `run`, `check` and
// `validate`, whichever way the scenario's tier computes it.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/core/input_error.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/session/tier_step.h"

namespace placesim {
namespace {

Scenario gpt_3d(const std::string& tier, const std::string& strategy) {
  static const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const Json document = Json::parse(R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 4, "hidden": 256, "heads": 4, "sequence": 128, "vocabulary": 1000}},
    "cluster": {"template": "dgx_a100"}, "run": {"batch_size": 8, "precision": "fp16", "optimizer": "adam"},
    "simulation": {"tier": ")" + tier + R"("}, "strategy": )" + strategy + "}");
  return read_scenario(JsonReader(document, "tier.json"), catalog, PLACESIM_SOURCE_DIR);
}

const std::string kLayout = R"({"parallelism": {"tensor": 2, "pipeline": 2, "data": 2, "micro_batches": 4}})";

// Closed form: no plan of the step; the throughput is the step's samples (batch 8 per replica x
// data 2) over its time, and the memory nearest capacity is a stage's.
TEST(TierStep, TheClosedFormTierSolvesTheStepWithoutAPlan) {
  const Scenario scenario = gpt_3d("closed-form", kLayout);
  const TierStep step = evaluate_on_tier(scenario, scenario.strategies.front(), false);
  ASSERT_TRUE(step.closed_form);
  EXPECT_FALSE(step.planned);
  EXPECT_EQ(step.step_seconds, step.closed_form->step_seconds);
  EXPECT_DOUBLE_EQ(step.samples_per_second, 16.0 / step.step_seconds);
  EXPECT_EQ(step.tasks, step.closed_form->cell_plan_tasks);
  EXPECT_EQ(step.fullest.rfind("stage ", 0), 0u) << step.fullest;
  EXPECT_TRUE(step.out_of_memory.empty());
}

// The plan-building tiers: the step and throughput of the plan run on the tier's engine, the
// fullest memory a device's.
TEST(TierStep, ThePlanTiersRunThePlanOnTheirEngine) {
  const Scenario scenario = gpt_3d("analytical", kLayout);
  const TierStep step = evaluate_on_tier(scenario, scenario.strategies.front(), false);
  ASSERT_TRUE(step.planned);
  EXPECT_FALSE(step.closed_form);
  const EvaluatedStrategy direct = evaluate_strategy(scenario, scenario.strategies.front(), false);
  EXPECT_EQ(step.step_seconds, direct.result.step_time_seconds());
  EXPECT_EQ(step.samples_per_second, direct.result.samples_per_second());
  EXPECT_EQ(step.tasks, direct.planned.plan.tasks.size());
  EXPECT_EQ(step.fullest.find("GPU:"), 0u) << step.fullest;
  EXPECT_GT(step.fullest_share(), 0);
  EXPECT_LT(step.fullest_share(), 1);
}

TEST(TierStep, TheClosedFormTakesOnly3dStrategies) {
  const Scenario scenario = gpt_3d("closed-form", R"({"data_parallel": {"replicas": 2}})");
  try {
    evaluate_on_tier(scenario, scenario.strategies.front(), false);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.json_path(), "/simulation/tier");
  }
}

}  // namespace
}  // namespace placesim
