// A comparison report's memory per strategy: the fullest device's peak, breakdown and capacity,
// and whether any device is out of memory (the table's "peak memory" column, for scripts).
#include <gtest/gtest.h>

#include "sim/report/comparison_report.h"

namespace placesim {
namespace comparison_report_test {  // a unity batch holds several test files
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

DeviceMetrics device(DeviceId id, double activations, double parameters, double capacity) {
  DeviceMetrics metrics;
  metrics.device = id;
  metrics.peak_memory.activation_bytes = activations;
  metrics.peak_memory.parameter_bytes = parameters;
  metrics.peak_memory_bytes = metrics.peak_memory.total();
  metrics.memory_capacity_bytes = capacity;
  metrics.out_of_memory = metrics.peak_memory_bytes > capacity;
  return metrics;
}

// GPU:0 holds 1 + 2 = 3 GiB of 16, GPU:1 4 + 1 = 5 GiB of 4: the strategy reports GPU:1's 5 GiB,
// its breakdown and its 4 GiB, and is out of memory. One on GPU:0 alone fits; a strategy without
// devices (the closed form's report has none) says only that nothing is out of memory.
TEST(ComparisonReport, EachStrategyCarriesItsFullestDevicesMemoryAndWhetherItFits) {
  StrategyResult over;
  over.name = "over";
  over.run.devices = {device(0, 1 * kGiB, 2 * kGiB, 16 * kGiB), device(1, 4 * kGiB, 1 * kGiB, 4 * kGiB)};
  StrategyResult fits;
  fits.name = "fits";
  fits.run.devices = {device(0, 1 * kGiB, 2 * kGiB, 16 * kGiB)};
  StrategyResult none;
  none.name = "none";

  const Json report = comparison_json("test", {over, fits, none});
  const Json& first = report["strategies"][0];
  EXPECT_DOUBLE_EQ(first["peak_memory_bytes"].get<double>(), 5 * kGiB);
  EXPECT_DOUBLE_EQ(first["peak_memory"]["activation_bytes"].get<double>(), 4 * kGiB);
  EXPECT_DOUBLE_EQ(first["peak_memory"]["parameter_bytes"].get<double>(), 1 * kGiB);
  EXPECT_DOUBLE_EQ(first["memory_capacity_bytes"].get<double>(), 4 * kGiB);
  EXPECT_TRUE(first["out_of_memory"].get<bool>());
  const Json& second = report["strategies"][1];
  EXPECT_DOUBLE_EQ(second["peak_memory_bytes"].get<double>(), 3 * kGiB);
  EXPECT_FALSE(second["out_of_memory"].get<bool>());
  const Json& third = report["strategies"][2];
  EXPECT_FALSE(third.contains("peak_memory_bytes"));
  EXPECT_FALSE(third["out_of_memory"].get<bool>());
  // The text table's column is the same figure.
  const std::string table = comparison_table({over}, "samples");
  EXPECT_NE(table.find("5.0 GiB"), std::string::npos) << table;
}

// VGG-16 at 256 images/s, 93 GFLOP per image of direct convolution (3 x 2 x 15.5 GMACs), on one
// V100 of 15.7 TFLOP/s fp32: MFU = 256 x 93e9 / 15.7e12 = 151.6%, which Winograd's fewer
// multiplications make possible. The Model FLOPs line says why, and the table of several
// strategies (one strategy's table follows its Model FLOPs line: said once); at 256 x 93e9 /
// 30e12 = 79.4% neither does.
TEST(ComparisonReport, AnMfuAbovePeakIsExplainedAndOnlyThen) {
  TrainingEfficiency above;
  above.devices = 1;
  above.peak_flops_per_second = 15.7e12;
  above.samples_per_second = 256;
  above.model_flops_per_sample = 93e9;
  above.hardware_flops_per_sample = 93e9;
  above.batch.per_replica = 64;
  above.batch.replicas = 1;
  EXPECT_NEAR(above.mfu(), 1.516, 0.001);
  TrainingEfficiency below = above;
  below.peak_flops_per_second = 30e12;
  EXPECT_NEAR(below.mfu(), 0.794, 0.001);
  StrategyResult cnn, other;
  cnn.name = "cnn";
  cnn.efficiency = above;
  other.name = "other";
  other.efficiency = below;
  const std::string note = "MFU above 100%: convolutions run as Winograd or FFT do fewer multiplications";
  EXPECT_NE(comparison_table({other, cnn}, "samples").find(note), std::string::npos) << comparison_table({other, cnn}, "samples");
  EXPECT_NE(efficiency_text(above).find(note), std::string::npos) << efficiency_text(above);
  EXPECT_EQ(comparison_table({cnn}, "samples").find("MFU above 100%"), std::string::npos);

  cnn.efficiency = below;
  EXPECT_EQ(comparison_table({other, cnn}, "samples").find("MFU above 100%"), std::string::npos);
  EXPECT_EQ(efficiency_text(below).find("MFU above 100%"), std::string::npos);
}

}  // namespace
}  // namespace comparison_report_test
}  // namespace placesim
