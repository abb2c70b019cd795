// The slowest of N GPUs (sim/cluster/device_spread.h) against formulas worked out by hand, and the
// shipped spread against the measured table it is fitted on.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/cluster/device_spread.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"

namespace placesim {
namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(ExpectedSlowest, OneGpuOrNoSpreadCostsNothing) {
  EXPECT_EQ(expected_slowest_of(0.0162, 1), 1.0);
  EXPECT_EQ(expected_slowest_of(0.0, 512), 1.0);
}

// max(e^{sZ1}, e^{sZ2}) has mean 2 e^{s^2/2} Phi(s / sqrt 2) (Z1 - Z2 ~ N(0, 2)); over one
// GPU's mean e^{s^2/2}: 2 Phi(s / sqrt 2). s = 0.0162: 1.0091397; s = 0.3: 1.1679960.
TEST(ExpectedSlowest, TwoGpusWaitForTheSlowerByTwicePhiOfSigmaOverRootTwo) {
  for (double sigma : {0.0162, 0.1, 0.3}) {
    SCOPED_TRACE(sigma);
    EXPECT_NEAR(expected_slowest_of(sigma, 2), 2.0 * normal_cdf(sigma / std::sqrt(2.0)), 1e-9);
  }
  EXPECT_NEAR(expected_slowest_of(0.0162, 2), 1.0091397, 1e-7);
}

// For a small spread the slowest of N is about exp(s E[max of N standard normals]): E[max of 3] =
// 3 / (2 sqrt(pi)) = 0.846284, of 4 = 1.029375 (order-statistic tables); s = 0.001 leaves only
// terms of order s^2 = 1e-6.
TEST(ExpectedSlowest, AMildSpreadGrowsAsTheExpectedMaximumOfNormals) {
  EXPECT_NEAR(expected_slowest_of(0.001, 3), 1.0 + 0.001 * 0.846284, 2e-6);
  EXPECT_NEAR(expected_slowest_of(0.001, 4), 1.0 + 0.001 * 1.029375, 2e-6);
  double previous = 1.0;
  for (int64_t n : {2, 8, 64, 512, 16384}) {
    const double factor = expected_slowest_of(0.0162, n);
    EXPECT_GT(factor, previous) << n;
    previous = factor;
  }
  EXPECT_LT(previous, std::exp(0.0162 * 4.5));  // 16,384 GPUs: E[max] of normals about 3.8
}

// Times at the normal's quantiles (i + 0.5) / n of a known log-normal give back its sigma.
TEST(GemmTimeSpreadFit, RecoversTheSigmaOfALogNormalFleet) {
  std::vector<double> times;
  const int n = 2001;
  for (int i = 0; i < n; ++i) {
    // Phi^-1 by bisection: the test should not share the code it checks.
    const double p = (i + 0.5) / n;
    double lo = -10, hi = 10;
    for (int k = 0; k < 200; ++k) (normal_cdf(0.5 * (lo + hi)) < p ? lo : hi) = 0.5 * (lo + hi);
    times.push_back(2.4 * std::exp(0.02 * 0.5 * (lo + hi)));
  }
  EXPECT_NEAR(fit_gemm_time_log_sigma(times), 0.02, 2e-5);
  EXPECT_THROW(fit_gemm_time_log_sigma({1.0, 2.0}), std::invalid_argument);
}

// The profiles' 0.0162 is the fit of the shipped table (392 V100s' median SGEMM times).
TEST(GemmTimeSpreadFit, TheShippedSpreadIsTheFitOfItsMeasuredTable) {
  const std::filesystem::path root(PLACESIM_SOURCE_DIR);
  std::ifstream table(root / "hardware_profiles/variation/longhorn_v100_sgemm.csv");
  ASSERT_TRUE(table) << "hardware_profiles/variation/longhorn_v100_sgemm.csv";
  std::string line;
  std::getline(table, line);
  ASSERT_EQ(line.rfind("gpu_uuid,node,runs,median_sgemm_ms,", 0), 0u);
  std::vector<double> times;
  while (std::getline(table, line)) {
    std::stringstream fields(line);
    std::string field;
    for (int column = 0; column < 4; ++column) std::getline(fields, field, ',');
    times.push_back(std::stod(field));
  }
  EXPECT_EQ(times.size(), 392u);
  const double fitted = fit_gemm_time_log_sigma(times);
  EXPECT_NEAR(fitted, 0.0162, 0.00005);
  const HardwareCatalog catalog(root / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  for (const std::string& id : catalog.device_ids()) {
    const DeviceSpec& spec = catalog.device(id, nowhere);
    if (!spec.gemm_time_spread) continue;
    SCOPED_TRACE(id);
    EXPECT_NEAR(spec.gemm_time_spread->log_sigma, fitted, 0.00005);
  }
  EXPECT_TRUE(catalog.device("v100-sxm2-16gb", nowhere).gemm_time_spread);
}

}  // namespace
}  // namespace placesim
