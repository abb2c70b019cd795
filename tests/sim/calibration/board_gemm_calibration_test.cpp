// calibrate --board-gemm-kernels: a borrowed kernel model's GEMM efficiency refitted on the
// board's own GEMM rows (docs/cost-model.md, "A board's own GEMM efficiency").
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sim/calibration/board_gemm_calibration.h"
#include "sim/calibration/kernel_calibration.h"
#include "sim/calibration/kernel_table.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/cluster/kernel_model_json.h"
#include "sim/core/input_error.h"

namespace placesim {
namespace {

const std::filesystem::path kBundled = std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles";

/// A profile directory of its own (devices, clusters, links; no kernel tables) that a test may rewrite.
class BoardGemmCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("board_gemm_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_ / "kernels");
    for (const char* entry : {"devices", "clusters", "collectives", "links.json", "prices.json"}) {
      std::filesystem::copy(kBundled / entry, directory_ / entry, std::filesystem::copy_options::recursive);
    }
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  /// bf16 GEMMs m x n x k (m 64..16,384; n = k 1,024..12,288) on `device`, each timed as the
  /// catalog's model at 16-bit efficiency `efficiency` predicts plus `floor_seconds`.
  std::filesystem::path synthetic_table(const std::string& device, double efficiency, double floor_seconds) {
    const HardwareCatalog catalog(directory_);
    const DeviceSpec& spec = catalog.device(device, JsonReader(Json::object(), "test"));
    KernelModel truth = *spec.kernel_model;
    truth.gemm_efficiency[Precision::kFp16] = truth.gemm_efficiency[Precision::kBf16] = efficiency;
    const std::filesystem::path table = directory_ / "kernels" / "own.csv";
    std::vector<std::string> shapes;
    for (int m = 64; m <= 16384; m *= 2) {
      for (int nk : {1024, 4096, 12288}) {
        shapes.push_back("m=" + std::to_string(m) + ";n=" + std::to_string(nk) + ";k=" + std::to_string(nk) +
                         ";ta=0;tb=0");
      }
    }
    {
      std::ofstream out(table);
      out << "device,op,shape,precision,algorithm,seconds,source\n";
      for (const auto& shape : shapes) out << device << ",gemm," << shape << ",bf16,cublas,1e-3,synthetic\n";
    }
    std::vector<double> seconds;
    for (const KernelMeasurement& row : read_kernel_table(table, device).rows) {
      seconds.push_back(predict_kernel_seconds(row, spec, truth) + floor_seconds);
    }
    std::ofstream out(table);
    out << "device,op,shape,precision,algorithm,seconds,source\n" << std::setprecision(17);
    for (size_t i = 0; i < shapes.size(); ++i) {
      out << device << ",gemm," << shapes[i] << ",bf16,cublas," << seconds[i] << ",synthetic\n";
    }
    return table;
  }

  std::filesystem::path directory_;
};

// Rows made at 3/4 of the profile's 16-bit efficiency with a 25 us floor: the refit recovers both,
// sets fp16 as well as bf16 (the A100's datasheet rates them alike, 312 TFLOP/s), keeps every other
// parameter of the borrowed model, and predicts the held-out rows exactly where the borrowed
// model was a third too fast.
TEST_F(BoardGemmCalibrationTest, RecoversTheBoardsEfficiencyAndKeepsTheBorrowedShapeParameters) {
  double truth = 0;
  {
    const HardwareCatalog bundled(directory_);
    truth = 0.75 * bundled.device("a100-sxm4-80gb", JsonReader(Json::object(), "test"))
                       .kernel_model->gemm_efficiency_for(Precision::kBf16);
  }
  const auto table = synthetic_table("a100-sxm4-80gb", truth, 25e-6);
  const HardwareCatalog catalog(directory_);
  const DeviceSpec& spec = catalog.device("a100-sxm4-80gb", JsonReader(Json::object(), "test"));
  BoardGemmCalibration calibration = calibrate_board_gemm_from_kernel_tables({table}, spec.id, catalog, "2026-12-02");
  ASSERT_EQ(calibration.refits.size(), 1u);
  const BoardGemmRefit& refit = calibration.refits.front();
  EXPECT_EQ(refit.precisions, (std::vector<Precision>{Precision::kFp16, Precision::kBf16}));
  EXPECT_EQ(refit.device, "a100-sxm4-80gb");
  EXPECT_EQ(refit.table, "hardware_profiles/kernels/own.csv");
  EXPECT_NEAR(refit.isolated_floor_seconds, 25e-6, 25e-6 * 0.02);
  // The shipped profile is refitted already: what it borrowed is its lender's efficiency.
  ASSERT_EQ(spec.kernel_model->fit.board_gemm.size(), 1u);
  EXPECT_NEAR(refit.borrowed_efficiency, spec.kernel_model->fit.board_gemm.front().borrowed_efficiency, 1e-12);
  EXPECT_NEAR(refit.borrowed_efficiency,
              catalog.device("a100-pcie-80gb", JsonReader(Json::object(), "test")).kernel_model->gemm_efficiency_for(Precision::kBf16),
              1e-12);
  EXPECT_EQ(refit.training_rows + refit.held_out_rows, 27);
  EXPECT_GT(refit.held_out_rows, 0);
  EXPECT_LT(refit.held_out_p90_error, 0.005);

  const KernelModel model = read_kernel_model(JsonReader(calibration.profile.at("kernel_model"), "test"));
  EXPECT_NEAR(model.gemm_efficiency.at(Precision::kBf16), truth, 0.002);
  EXPECT_NEAR(model.gemm_efficiency.at(Precision::kFp16), truth, 0.002);
  const KernelModel& borrowed = *spec.kernel_model;
  EXPECT_EQ(model.gemm_efficiency.at(Precision::kFp32), borrowed.gemm_efficiency.at(Precision::kFp32));
  EXPECT_EQ(model.gemm_efficiency.at(Precision::kTf32), borrowed.gemm_efficiency.at(Precision::kTf32));
  EXPECT_EQ(model.tile_overhead_k_by_precision, borrowed.tile_overhead_k_by_precision);
  EXPECT_EQ(model.small_tile_exponent, borrowed.small_tile_exponent);
  EXPECT_EQ(model.kernel_overhead_seconds, borrowed.kernel_overhead_seconds);
  EXPECT_EQ(model.memory_efficiency, borrowed.memory_efficiency);
  EXPECT_EQ(model.fit.scaled_from, borrowed.fit.scaled_from);
  ASSERT_EQ(model.fit.board_gemm.size(), 1u);
  EXPECT_EQ(model.fit.board_gemm.front().training_rows, refit.training_rows);
  // The lender's model is about a tenth too fast on every compute-bound row; the refit is not.
  ASSERT_FALSE(calibration.held_out_before.empty());
  EXPECT_GT(calibration.held_out_before.back().median_error, 0.05);
  EXPECT_LT(calibration.held_out_after.back().median_error, 0.002);
  char expected[64];
  std::snprintf(expected, sizeof expected, "fp16/bf16 %.3f (borrowed %.3f)", model.gemm_efficiency.at(Precision::kBf16),
                refit.borrowed_efficiency);
  EXPECT_NE(calibration.profile.at("sources").at("board_gemm_efficiency").get<std::string>().find(expected),
            std::string::npos);
}

// Borrowing the model again (--kernel-model-from, e.g. after the lender is refitted) keeps the
// board's own 16-bit efficiency; a third board borrowing from it takes the refit along, and its
// sources say whose rows it came from.
TEST_F(BoardGemmCalibrationTest, ABoardsOwnEfficiencySurvivesBorrowingAgainAndTravelsWithTheModel) {
  const auto table = synthetic_table("a100-sxm4-80gb", 0.6, 10e-6);
  {
    const HardwareCatalog catalog(directory_);
    BoardGemmCalibration calibration =
        calibrate_board_gemm_from_kernel_tables({table}, "a100-sxm4-80gb", catalog, "2026-12-02");
    std::ofstream(directory_ / "devices" / "a100-sxm4-80gb.json") << calibration.profile.dump(2);
  }
  const HardwareCatalog catalog(directory_);
  const JsonReader nowhere(Json::object(), "test");
  const DeviceSpec& refitted = catalog.device("a100-sxm4-80gb", nowhere);
  ASSERT_EQ(refitted.kernel_model->fit.board_gemm.size(), 1u);
  const double own = refitted.kernel_model->gemm_efficiency_for(Precision::kBf16);
  EXPECT_NEAR(own, 0.6, 0.002);

  const Json again = transfer_kernel_model("a100-pcie-80gb", "a100-sxm4-80gb", catalog, "2026-12-03");
  const KernelModel again_model = read_kernel_model(JsonReader(again.at("kernel_model"), "test"));
  EXPECT_EQ(again_model.gemm_efficiency.at(Precision::kBf16), own);
  EXPECT_EQ(again_model.gemm_efficiency.at(Precision::kFp16), own);
  EXPECT_EQ(again_model.gemm_efficiency.at(Precision::kFp32),
            catalog.device("a100-pcie-80gb", nowhere).kernel_model->gemm_efficiency.at(Precision::kFp32));
  ASSERT_EQ(again_model.fit.board_gemm.size(), 1u);
  EXPECT_NE(again.at("sources").at("kernel_model").get<std::string>().find("refitted on this board's own GEMM rows"),
            std::string::npos);

  const Json third = transfer_kernel_model("a100-sxm4-80gb", "a100-sxm4-40gb", catalog, "2026-12-03");
  const KernelModel third_model = read_kernel_model(JsonReader(third.at("kernel_model"), "test"));
  EXPECT_EQ(third_model.gemm_efficiency.at(Precision::kBf16), own);
  ASSERT_EQ(third_model.fit.board_gemm.size(), 1u);
  EXPECT_EQ(third_model.fit.board_gemm.front().device, "a100-sxm4-80gb");
  EXPECT_NE(third.at("sources").at("kernel_model").get<std::string>().find("refitted on a100-sxm4-80gb's own GEMM rows"),
            std::string::npos);
}

// Refitting a refitted profile on the same rows gives its efficiency back, and still records and
// compares with what the board first borrowed (it once recorded the earlier refit as "borrowed").
TEST_F(BoardGemmCalibrationTest, RefittingARefittedProfileKeepsWhatItBorrowed) {
  const auto table = synthetic_table("a100-sxm4-80gb", 0.6, 10e-6);
  double lender = 0;
  BoardGemmCalibration first;
  {
    const HardwareCatalog catalog(directory_);
    lender = catalog.device("a100-pcie-80gb", JsonReader(Json::object(), "test")).kernel_model->gemm_efficiency_for(Precision::kBf16);
    first = calibrate_board_gemm_from_kernel_tables({table}, "a100-sxm4-80gb", catalog, "2026-12-03");
    std::ofstream(directory_ / "devices" / "a100-sxm4-80gb.json") << first.profile.dump(2);
  }
  const HardwareCatalog catalog(directory_);
  const BoardGemmCalibration second = calibrate_board_gemm_from_kernel_tables({table}, "a100-sxm4-80gb", catalog, "2026-12-03");
  ASSERT_EQ(second.refits.size(), 1u);
  EXPECT_NEAR(second.refits.front().borrowed_efficiency, lender, 1e-12);
  const KernelModel once = read_kernel_model(JsonReader(first.profile.at("kernel_model"), "test"));
  const KernelModel twice = read_kernel_model(JsonReader(second.profile.at("kernel_model"), "test"));
  EXPECT_NEAR(twice.gemm_efficiency.at(Precision::kBf16), once.gemm_efficiency.at(Precision::kBf16), 1e-6);
  ASSERT_EQ(twice.fit.board_gemm.size(), 1u);
  EXPECT_NEAR(twice.fit.board_gemm.front().borrowed_efficiency, lender, 1e-12);
  ASSERT_FALSE(second.held_out_before.empty());
  EXPECT_NEAR(second.held_out_before.back().median_error, first.held_out_before.back().median_error, 1e-9);
  EXPECT_GT(second.held_out_before.back().median_error, 0.05);  // the lender's 0.75 against the board's 0.6
}

// What cannot be refitted is refused with the reason: a model fitted on the device's own tables
// (the V100 16GB's), a profile with no model at all (the TPU), a table without the device's GEMMs.
TEST_F(BoardGemmCalibrationTest, RefusesOwnFitsMissingModelsAndTablesWithoutTheBoardsGemms) {
  const auto table = synthetic_table("a100-sxm4-80gb", 0.9, 10e-6);
  const HardwareCatalog catalog(directory_);
  for (const std::string device : {"v100-sxm2-16gb", "tpu-v3", "a100-sxm4-40gb"}) {
    SCOPED_TRACE(device);
    try {
      calibrate_board_gemm_from_kernel_tables({table}, device, catalog, "2026-12-02");
      FAIL() << "accepted";
    } catch (const InputError& error) {
      const std::string message = error.what();
      if (device == "v100-sxm2-16gb") {
        EXPECT_NE(message.find("refit it with --from-kernels"), std::string::npos) << message;
      }
      if (device == "tpu-v3") {
        EXPECT_NE(message.find("--kernel-model-from"), std::string::npos) << message;
      }
      if (device == "a100-sxm4-40gb") {
        EXPECT_NE(message.find("no GEMM rows"), std::string::npos) << message;
      }
    }
  }
}

}  // namespace
}  // namespace placesim
