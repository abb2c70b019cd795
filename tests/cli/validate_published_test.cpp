// `placesim validate` against published figures: one row per strategy with a published figure,
// the error computed from the two numbers printed, and the MAPE line as their mean.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>

#include "tests/cli/run_placesim.h"

namespace placesim {
namespace {

using testing::CommandResult;
using testing::run_placesim;

TEST(ValidatePublished, PrintsEachCaseAndTheirMeanAbsolutePercentageError) {
  CommandResult result = run_placesim({"validate", "-q", "scenarios/validation/tf_dgx1_p100_resnet50_ps_cpu.json"},
                                      PLACESIM_SOURCE_DIR);
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::istringstream lines(result.output);
  std::string line;
  std::regex row(R"(^(\S.*\S)\s+samples_per_second\s+(\S+)\s+(\S+)\s+([+-]\d+\.\d)%$)");
  std::regex mape(R"(^MAPE: (\d+\.\d)% over (\d+) cases$)");
  double sum = 0;
  int rows = 0;
  bool saw_mape = false;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_match(line, match, row)) {
      double published = std::stod(match[2]), predicted = std::stod(match[3]), error = std::stod(match[4]);
      EXPECT_NEAR(error, 100 * (predicted - published) / published, 0.1) << line;
      sum += std::fabs(100 * (predicted - published) / published);
      ++rows;
    } else if (std::regex_match(line, match, mape)) {
      saw_mape = true;
      EXPECT_EQ(std::stoi(match[2]), 4);  // 1, 2, 4 and 8 GPUs
      EXPECT_NEAR(std::stod(match[1]), sum / rows, 0.1);
    }
  }
  EXPECT_EQ(rows, 4) << result.output;
  EXPECT_TRUE(saw_mape) << result.output;
}

// A closed-form scenario (thousands of GPUs) is validated from the 3D closed form: the step it
// predicts is the one `run` prints for the same file, and the error is computed from the two.
TEST(ValidatePublished, ClosedFormScenariosArePredictedWithoutAPlanOfTheStep) {
  const std::string file = "scenarios/validation/mtnlg_530b_selene_280_nodes.json";
  CommandResult validated = run_placesim({"validate", "-q", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(validated.exit_status, 0) << validated.output;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(validated.output, row,
                                std::regex(R"(2240 GPUs step_time_seconds\s+60\.1\s+(\S+)\s+([+-]\d+\.\d)%)")))
      << validated.output;
  const double predicted = std::stod(row[1]);
  CommandResult ran = run_placesim({"run", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(ran.exit_status, 0) << ran.output;
  std::smatch step;
  ASSERT_TRUE(std::regex_search(ran.output, step, std::regex(R"(Predicted step time: ([0-9.]+) s)"))) << ran.output;
  EXPECT_NEAR(predicted, std::stod(step[1]), 0.01 * predicted) << ran.output;  // validate prints 4 digits
  EXPECT_NEAR(std::stod(row[2]), 100 * (predicted - 60.1) / 60.1, 0.1);
}

// `validate --scaling` on a 3D scenario (BERT-Large, data 1 and 8, closed-form tier): the 8-GPU
// row's scaling is its samples/s over 8 times the 1-GPU row's, published and predicted, each
// from the figures `validate` prints, and the difference is theirs in points.
TEST(ValidatePublished, ScalingCountsA3dStrategysAccelerators) {
  const std::string file = "scenarios/validation/nvidia_dle_bert_large_dgx_a100_80gb_fp16_1_node.json";
  CommandResult result = run_placesim({"validate", "-q", "--scaling", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::map<std::string, std::pair<double, double>> rows;  // strategy: published, predicted
  std::regex case_row(R"(/ (\d+ GPUs?)\s+samples_per_second\s+(\S+)\s+(\S+)\s)");
  for (std::sregex_iterator it(result.output.begin(), result.output.end(), case_row), end; it != end; ++it) {
    rows[(*it)[1]] = {std::stod((*it)[2]), std::stod((*it)[3])};
  }
  ASSERT_EQ(rows.size(), 2u) << result.output;
  const auto [published_1, predicted_1] = rows.at("1 GPU");
  const auto [published_8, predicted_8] = rows.at("8 GPUs");
  std::smatch scaling;
  ASSERT_TRUE(std::regex_search(result.output, scaling,
                                std::regex(R"(_fp16_1_node\s+8\s+([0-9.]+)%\s+([0-9.]+)%\s+([+-][0-9.]+)\n)")))
      << result.output;
  EXPECT_NEAR(std::stod(scaling[1]), 100 * published_8 / (8 * published_1), 0.1);
  EXPECT_NEAR(std::stod(scaling[2]), 100 * predicted_8 / (8 * predicted_1), 0.2);  // validate prints 4 digits
  EXPECT_NEAR(std::stod(scaling[3]), std::stod(scaling[2]) - std::stod(scaling[1]), 0.11);
  EXPECT_NE(result.output.find("over 1 rows"), std::string::npos) << result.output;
}

// A published scaling efficiency (Horovod's README gives 90% on 128 GPUs, no images/s) is
// compared with samples/s per GPU on 128 GPUs over samples/s on the one GPU it names, each as
// `run` prints it; it joins the scaling table, not the MAPE.
TEST(ValidatePublished, AScalingEfficiencyIsThroughputPerGpuAgainstTheStrategyItNames) {
  const std::string file = "scenarios/validation/horovod_resnet101_p100_roce_25g.json";
  CommandResult validated = run_placesim({"validate", "-q", "--scaling", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(validated.exit_status, 0) << validated.output;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(validated.output, row,
                                std::regex(R"(_roce_25g\s+128\s+90\.0%\s+([0-9.]+)%\s+([+-][0-9.]+)\n)")))
      << validated.output;
  std::map<std::string, double> throughput;
  for (const std::string strategy : {"1 GPU", "128 GPUs"}) {
    CommandResult ran = run_placesim({"run", file, "--strategy", strategy}, PLACESIM_SOURCE_DIR);
    ASSERT_EQ(ran.exit_status, 0) << ran.output;
    std::smatch samples;
    ASSERT_TRUE(std::regex_search(ran.output, samples, std::regex(R"(Throughput: ([0-9.]+) samples/s)"))) << ran.output;
    throughput[strategy] = std::stod(samples[1]);
  }
  const double predicted = 100 * throughput["128 GPUs"] / (128 * throughput["1 GPU"]);
  EXPECT_NEAR(std::stod(row[1]), predicted, 0.06);
  EXPECT_NEAR(std::stod(row[2]), std::stod(row[1]) - 90.0, 0.06);
  EXPECT_NE(validated.output.find("over 2 rows"), std::string::npos) << validated.output;
  // Its row in the cases' table: percentages, and the difference in points as in the scaling table.
  std::smatch case_row;
  ASSERT_TRUE(std::regex_search(validated.output, case_row,
                                std::regex(R"(/ 128 GPUs\s+scaling_efficiency\s+90\.0%\s+([0-9.]+)%\s+([+-][0-9.]+) pts\n)")))
      << validated.output;
  EXPECT_EQ(case_row[1].str(), row[1].str());
  EXPECT_EQ(case_row[2].str(), row[2].str());
  EXPECT_NE(validated.output.find("2 scaling efficiencies: in `validate --scaling`, not in the MAPE"), std::string::npos)
      << validated.output;
  EXPECT_NE(validated.output.find("MAPE: none (no absolute figure among these cases)"), std::string::npos)
      << validated.output;
}

// A published model TFLOP/s per GPU (Llama 3's table 4) is compared with the model FLOP/s per
// device that `run` prints for the same file (PaLM's formula, docs/llm-planning.md).
TEST(ValidatePublished, ModelTflopsPerGpuIsTheModelFlopRateRunPrints) {
  const std::string file = "scenarios/validation/llama3_405b_h100_8192_gpus.json";
  CommandResult validated = run_placesim({"validate", "-q", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(validated.exit_status, 0) << validated.output;
  std::smatch row;
  ASSERT_TRUE(std::regex_search(validated.output, row,
                                std::regex(R"(8192 GPUs\s+model_tflops_per_gpu\s+430\s+(\S+)\s+([+-]\d+\.\d)%)")))
      << validated.output;
  const double predicted = std::stod(row[1]);
  CommandResult ran = run_placesim({"run", "--allow-oom", file}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(ran.exit_status, 0) << ran.output;
  std::smatch flops;
  ASSERT_TRUE(std::regex_search(ran.output, flops, std::regex(R"(Model FLOPs: ([0-9.]+) TFLOP/s per device)")))
      << ran.output;
  EXPECT_NEAR(predicted, std::stod(flops[1]), 0.001 * predicted) << ran.output;
  EXPECT_NEAR(std::stod(row[2]), 100 * (predicted - 430) / 430, 0.1);
}

// The error by device profile: each line the mean |error| of that device's rows, next to where
// its costs come from (here a P100 and a V100 scenario, both with borrowed kernel models).
TEST(ValidatePublished, ErrorsAreAlsoGivenByDeviceWithTheirCostSource) {
  CommandResult result = run_placesim({"validate", "-q", "scenarios/validation/megatron_v1_dgx2h_1p2b_tp1.json",
                                       "scenarios/validation/tf_dgx1_p100_vgg16_nccl.json"},
                                      PLACESIM_SOURCE_DIR);
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::map<std::string, std::pair<double, int>> sums;  // by scenario prefix
  std::regex row(R"(^(\w+) / .*\s([+-]\d+\.\d)%$)");
  std::istringstream lines(result.output);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, row)) continue;
    auto& [sum, count] = sums[match[1].str().rfind("megatron", 0) == 0 ? "v100" : "p100"];
    sum += std::fabs(std::stod(match[2]));
    ++count;
  }
  ASSERT_EQ(sums["p100"].second, 4) << result.output;
  ASSERT_EQ(sums["v100"].second, 1) << result.output;
  std::smatch p100, v100;
  ASSERT_TRUE(std::regex_search(result.output, p100,
                                std::regex(R"(\n  p100-sxm2-16gb\s+(\d+\.\d)% over   4 cases  kernel model of p100-pcie-16gb\n)")))
      << result.output;
  EXPECT_NEAR(std::stod(p100[1]), sums["p100"].first / 4, 0.1);
  ASSERT_TRUE(std::regex_search(result.output, v100,
                                std::regex(R"(\n  v100-sxm3-32gb-h\s+(\d+\.\d)% over   1 cases  kernel model of v100-sxm2-16gb\n)")))
      << result.output;
  EXPECT_NEAR(std::stod(v100[1]), sums["v100"].first, 0.1);
  EXPECT_TRUE(std::regex_search(result.output, std::regex(R"(\nMAPE: \d+\.\d% over 5 cases\n$)"))) << result.output;
}

TEST(ValidatePublished, ScenariosWithoutPublishedFiguresAreAnInputError) {
  CommandResult result = run_placesim({"validate", "scenarios/seed_device_placement.json"}, PLACESIM_SOURCE_DIR);
  EXPECT_EQ(result.exit_status, 2) << result.output;
  EXPECT_NE(result.output.find("no strategy with a \"published\" figure"), std::string::npos) << result.output;
}

// `validate --collectives`: the measured collective curves against the link model, every
// point's error the one its two times give, and the summary line; it takes no scenarios.
TEST(ValidateCollectives, EachPointsErrorIsItsTwoTimesAndTheSummaryEnds) {
  CommandResult result = run_placesim({"validate", "--collectives", "--details"}, PLACESIM_SOURCE_DIR);
  ASSERT_EQ(result.exit_status, 0) << result.output;
  std::istringstream lines(result.output);
  std::string line;
  std::regex point(R"(^\S+\s+\S+\s+\d+\s+\S+\s+([0-9.]+)\s+([0-9.]+)\s+\S+\s+\S+\s+([+-]\d+\.\d)%$)");
  int points = 0;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_match(line, match, point)) continue;
    const double measured = std::stod(match[1]), predicted = std::stod(match[2]);
    EXPECT_NEAR(std::stod(match[3]), 100 * (predicted - measured) / measured, 0.05 + 100 * 0.005 * (measured + predicted) / (measured * measured)) << line;
    ++points;
  }
  EXPECT_GT(points, 400);
  std::smatch summary;
  ASSERT_TRUE(std::regex_search(result.output, summary,
                                std::regex(R"(Collectives: mean \|error\| \S+%, median \S+% over (\d+) measured points)")))
      << result.output;
  EXPECT_EQ(std::stoi(summary[1]), points);

  CommandResult with_scenario =
      run_placesim({"validate", "--collectives", "scenarios/validation/tf_dgx1_p100_resnet50_ps_cpu.json"},
                   PLACESIM_SOURCE_DIR);
  EXPECT_EQ(with_scenario.exit_status, 2) << with_scenario.output;
  EXPECT_NE(with_scenario.output.find("--collectives: takes no scenarios"), std::string::npos) << with_scenario.output;
  CommandResult nothing = run_placesim({"validate"}, PLACESIM_SOURCE_DIR);
  EXPECT_EQ(nothing.exit_status, 2) << nothing.output;
  EXPECT_NE(nothing.output.find("scenarios: none given"), std::string::npos) << nothing.output;
}

}  // namespace
}  // namespace placesim
