// A 3D strategy's stages given by hand (`"stage_ops"`, docs/pipeline-parallel.md): per stage,
// op-name globs, the first stage whose glob matches an op taking it, an op no glob matches
// joining its first consumer's stage. The small GPT's ops (tests/support/scenario_text.h).
#include <gtest/gtest.h>

#include <string>

#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace stage_ops_test {  // a unity batch holds several test files
namespace {

Scenario two_stages(const std::string& parallelism_extra) {
  return testing::scenario_from_text(testing::small_gpt_scenario(
      R"({"pipeline": 2, "micro_batches": 2)" + parallelism_extra + "}", 1, R"({"tier": "analytical"})"));
}

DeviceId device_of(const ExecutionPlan& plan, const std::string& name) {
  for (const Task& task : plan.tasks) {
    if (task.name == name) return task.device;
  }
  throw std::runtime_error("no task " + name);
}

// h.1/ln_1 matches stage 0's "h.1/ln_1" before stage 1's "h.*", and h.0's ops stage 0's "h.0/*";
// h.1/qkv only stage 1's "h.*". The input token ids, matched by no glob, join their consumer's
// stage (0), the labels theirs (the loss, stage 1).
TEST(StageOps, TheFirstMatchingStageTakesAnOp) {
  const Scenario scenario =
      two_stages(R"(, "stage_ops": [["embedding/*", "h.0/*", "h.1/ln_1"], ["h.*", "ln_f/*", "lm_head/*", "loss/*"]])");
  const ParallelismOptions& p = *scenario.strategies.front().parallelism;
  const ExecutionPlan plan = plan_scenario(scenario).plan;
  EXPECT_EQ(device_of(plan, "mb0/fwd/h.1/ln_1"), p.devices[0]);
  EXPECT_EQ(device_of(plan, "mb0/fwd/h.0/mlp_proj"), p.devices[0]);
  EXPECT_EQ(device_of(plan, "mb0/fwd/input/token_ids"), p.devices[0]);
  EXPECT_EQ(device_of(plan, "mb0/fwd/h.1/qkv"), p.devices[1]);
  EXPECT_EQ(device_of(plan, "mb0/fwd/h.1/scores"), p.devices[1]);
  EXPECT_EQ(device_of(plan, "mb0/fwd/input/labels"), p.devices[1]);
}

void expect_refused(const std::string& parallelism_extra, const std::string& path, const std::string& words) {
  const testing::Refusal refusal = testing::refusal_of([&] { plan_scenario(two_stages(parallelism_extra)); });
  ASSERT_TRUE(refusal.refused) << "accepted " << parallelism_extra;
  EXPECT_EQ(refusal.json_path, path) << refusal.message;
  EXPECT_NE(refusal.message.find(words), std::string::npos) << "[" << words << "] in " << refusal.message;
}

TEST(StageOps, RefusesSplitsItCannotUse) {
  const std::string at = "/strategy/parallelism/";
  expect_refused(R"(, "stage_ops": [["*"]])", at + "stage_ops", "gives 1 list of ops for \"pipeline\" 2: one per stage");
  expect_refused(R"(, "stage_ops": [["h.0/*"], []])", at + "stage_ops/1", "at least one op pattern");
  expect_refused(R"(, "stage_ops": [["h.0/*"], [""]])", at + "stage_ops/1/0", "must not be empty");
  expect_refused(R"(, "stage_ops": [["h.0/*"], ["h.1/*"]], "stage_split": "layers")", at + "stage_split", "not both");
  expect_refused(R"(, "stage_ops": [["h.0/*"], ["h.1/*"]], "virtual_stages": 2)", at + "stage_ops", "interleaved");
  // Stages must follow the graph: h.1 on stage 0 reads h.0 from stage 1.
  expect_refused(R"(, "stage_ops": [["h.1/*"], ["h.0/*"]])", at + "stage_ops", "stages must follow the graph's order");
}

}  // namespace
}  // namespace stage_ops_test
}  // namespace placesim
