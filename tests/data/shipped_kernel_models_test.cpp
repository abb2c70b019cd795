// Every kernel model a shipped device profile carries is what `placesim calibrate --from-kernels`
// fits today on the shipped tables it names: a table, a converter or a fit that changes fails
// here until the profile is refitted. Also checks one converted row by hand against its source.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "sim/calibration/board_gemm_calibration.h"
#include "sim/calibration/kernel_calibration.h"
#include "sim/calibration/kernel_table.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/cluster/kernel_model_json.h"

namespace placesim {
namespace {

TEST(ShippedKernelModels, EachProfilesModelIsTheFitOfTheTablesItNames) {
  const std::filesystem::path source_dir(PLACESIM_SOURCE_DIR);
  const HardwareCatalog catalog(source_dir / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  int refitted = 0;
  for (const std::string& id : catalog.device_ids()) {
    const DeviceSpec& spec = catalog.device(id, nowhere);
    if (!spec.kernel_model || !spec.kernel_model->fit.scaled_from.empty()) continue;
    SCOPED_TRACE("hardware_profiles/devices/" + id + ".json, fitted on " + spec.kernel_model->fit.table);
    const KernelModel& shipped = *spec.kernel_model;
    // The precisions it was fitted on (--precision): those it has an efficiency for. The P100's
    // DeepBench "pseudo fp16" rows are fp32 math and were left out (hardware_profiles/kernels/README.md).
    std::set<Precision> precisions;
    for (const auto& entry : shipped.gemm_efficiency) precisions.insert(entry.first);
    const FittedTables tables = fitted_tables_of(shipped.fit.table, catalog);
    KernelCalibration today =
        calibrate_from_kernel_tables(tables.whole, id, precisions, catalog, "today", tables.memory_rows,
                                     shipped.fit.sibling_devices);
    const KernelModel& fitted = today.fit.model;
    ASSERT_EQ(fitted.gemm_efficiency.size(), shipped.gemm_efficiency.size());
    for (const auto& [precision, efficiency] : shipped.gemm_efficiency) {
      EXPECT_NEAR(fitted.gemm_efficiency_for(precision), efficiency, 1e-6 * efficiency) << to_string(precision);
    }
    EXPECT_NEAR(fitted.small_tile_exponent, shipped.small_tile_exponent, 1e-6);
    EXPECT_NEAR(fitted.tile_overhead_k, shipped.tile_overhead_k, 1e-6 * std::max(1.0, shipped.tile_overhead_k));
    EXPECT_EQ(fitted.conv_efficiency.size(), shipped.conv_efficiency.size());
    EXPECT_NEAR(fitted.memory_efficiency, shipped.memory_efficiency, 1e-6);
    EXPECT_NEAR(fitted.reduction_memory_efficiency, shipped.reduction_memory_efficiency, 1e-6);
    EXPECT_EQ(fitted.fit.held_out_rows, shipped.fit.held_out_rows);
    EXPECT_NEAR(fitted.fit.held_out_median_error, shipped.fit.held_out_median_error, 1e-6);
    ++refitted;
  }
  EXPECT_GE(refitted, 5);  // m40, p100-pcie-16gb, v100-sxm2-16gb, h100-sxm5-80gb, k80
}

// The A100 SXM4 profiles' roofline bandwidth fractions are today's fit of measured memory-bound
// kernels (`calibrate --memory-kernels`): the 80 GB module's own (LLMCompass's fp16 softmax,
// LayerNorm and GELU on A100 80 GB SXM4), the 40 GB module's from NeuSight's PCIe card of the same
// memory.
TEST(ShippedKernelModels, TheA100BandwidthFractionsAreTheFitOfTheirMeasuredKernels) {
  const std::filesystem::path source_dir(PLACESIM_SOURCE_DIR);
  const HardwareCatalog catalog(source_dir / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  struct Fitted {
    std::string target, table, source;
  };
  for (const Fitted& fitted : {Fitted{"a100-sxm4-80gb", "llmcompass_a100-sxm4-80gb.csv", "a100-sxm4-80gb"},
                               Fitted{"a100-sxm4-40gb", "neusight_a100-pcie-40gb.csv", "a100-pcie-40gb"}}) {
    SCOPED_TRACE(fitted.target);
    const DeviceSpec& spec = catalog.device(fitted.target, nowhere);
    MemoryCalibration today = calibrate_memory_from_kernel_tables(
        {source_dir / "hardware_profiles/kernels" / fitted.table}, fitted.target, fitted.source, catalog, "today");
    EXPECT_NEAR(spec.memory_efficiency, today.elementwise.efficiency, 1e-6);
    EXPECT_NEAR(spec.reduction_memory_efficiency, today.reduction.efficiency, 1e-6);
    if (spec.kernel_model) {  // borrowed (a100-pcie-80gb's GEMMs): it keeps the profile's own fractions
      EXPECT_NEAR(spec.kernel_model->memory_efficiency, today.elementwise.efficiency, 1e-6);
      EXPECT_NEAR(spec.kernel_model->reduction_memory_efficiency, today.reduction.efficiency, 1e-6);
    }
    // Normalisations reach less of the bandwidth than elementwise kernels in the same byte count.
    EXPECT_LT(spec.reduction_memory_efficiency, spec.memory_efficiency);
  }
}

// A borrowed model's GEMM efficiency refitted on the board's own rows (`calibrate
// --board-gemm-kernels`) is today's fit of the tables it names: the A100 SXM4 80 GB module's
// 16-bit efficiency from LLMCompass's BF16 GEMMs measured on it, above the PCIe card's it
// borrowed (a 400 W module against a 300 W card); the SXM4 40 GB module borrows the 80 GB's model
// and with it this efficiency.
TEST(ShippedKernelModels, TheA100SxmGemmEfficiencyIsTheFitOfItsOwnRows) {
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const JsonReader nowhere(Json::object(), "test");
  const DeviceSpec& module = catalog.device("a100-sxm4-80gb", nowhere);
  ASSERT_TRUE(module.kernel_model);
  ASSERT_EQ(module.kernel_model->fit.board_gemm.size(), 1u);
  const BoardGemmRefit& shipped = module.kernel_model->fit.board_gemm.front();
  EXPECT_EQ(shipped.device, "a100-sxm4-80gb");
  EXPECT_EQ(shipped.precisions, (std::vector<Precision>{Precision::kFp16, Precision::kBf16}));
  const FittedTables tables = fitted_tables_of(shipped.table, catalog);
  BoardGemmCalibration today =
      calibrate_board_gemm_from_kernel_tables(tables.whole, "a100-sxm4-80gb", catalog, "today");
  const KernelModel refitted = read_kernel_model(JsonReader(today.profile.at("kernel_model"), "test"));
  for (Precision precision : shipped.precisions) {
    EXPECT_NEAR(module.kernel_model->gemm_efficiency.at(precision), refitted.gemm_efficiency.at(precision), 1e-6);
  }
  ASSERT_EQ(today.refits.size(), 1u);
  EXPECT_NEAR(shipped.isolated_floor_seconds, today.refits.front().isolated_floor_seconds, 1e-9);
  EXPECT_EQ(shipped.held_out_rows, today.refits.front().held_out_rows);
  const DeviceSpec& card = catalog.device(module.kernel_model->fit.scaled_from, nowhere);
  EXPECT_GT(module.kernel_model->gemm_efficiency_for(Precision::kBf16),
            card.kernel_model->gemm_efficiency_for(Precision::kBf16));

  const DeviceSpec& module_40gb = catalog.device("a100-sxm4-40gb", nowhere);
  ASSERT_TRUE(module_40gb.kernel_model);
  EXPECT_EQ(module_40gb.kernel_model->fit.scaled_from, "a100-sxm4-80gb");
  EXPECT_EQ(module_40gb.kernel_model->gemm_efficiency, module.kernel_model->gemm_efficiency);
}

// OpenXLA's sm_90 entry b=1, m=n=k=4096 says bf16xbf16->bf16 value 780193877565849 FLOP/s
// (matmul_interpolator_data.h @ea2c45f2): 2 x 4096^3 / 7.80193877565849e14 = 1.76160e-4 s.
TEST(ShippedKernelModels, TheXlaTableHoldsTheSourcesTimeFor4096Cubed) {
  const KernelTable table =
      read_kernel_table(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles/kernels/xla_h100-sxm5-80gb.csv");
  int found = 0;
  for (const KernelMeasurement& row : table.rows) {
    if (row.op != "gemm" || row.precision != Precision::kBf16) continue;
    if (row.shape.gemm.m != 4096 || row.shape.gemm.n != 4096 || row.shape.gemm.k != 4096) continue;
    EXPECT_NEAR(row.seconds, 2.0 * 4096.0 * 4096.0 * 4096.0 / 7.80193877565849e14, 1e-9);
    ++found;
  }
  EXPECT_EQ(found, 1);
  // 375 shapes (b in 1, 2, 4; m, n, k in 256 .. 4096), bf16 and TF32.
  EXPECT_EQ(table.rows.size(), 750u);
}

}  // namespace
}  // namespace placesim
