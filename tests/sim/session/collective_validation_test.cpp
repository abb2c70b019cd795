// `placesim validate --collectives` (sim/session/collective_validation.h): each measured point
// of a bundled cluster's nccl-tests curves against placesim's link model on the same GPUs, and
// the summary's arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "sim/session/collective_validation.h"

namespace placesim {
namespace {

const std::filesystem::path kCollectiveCheckRoot = PLACESIM_SOURCE_DIR;

const std::vector<CollectiveCheck>& bundled_collective_checks() {
  static const std::vector<CollectiveCheck> checks =
      check_collective_curves(HardwareCatalog(kCollectiveCheckRoot / "hardware_profiles"));
  return checks;
}

const CollectiveCheck* find_collective_check(const std::string& cluster, CollectiveKind kind, int gpus, double bytes) {
  for (const CollectiveCheck& c : bundled_collective_checks()) {
    if (c.cluster == cluster && c.kind == kind && c.gpus == gpus && c.bytes == bytes) return &c;
  }
  return nullptr;
}

TEST(CollectiveValidation, TwoDgx1V100GpusOneNvlinkBrickOneGibibyte) {
  // vTrain's 2-GPU all-reduce of 1 GiB on a DGX-1 V100 (vtrain_v100-sxm2-nvlink-8gpu.csv,
  // AR_GPU2 line 1025): 0.04761 s. GPUs 0 and 1 share one NVLink 2.0 brick, 22.55 GB/s each
  // way (links.json nvlink2). NCCL's ring under Simple: latency 8.4 us + 2 (n - 1) steps x 3.4
  // us over NVLink (nccl_cost_model.cpp) = 15.2 us, and 2 (n - 1) / n x 1 GiB = 1 GiB at
  // 22.55 GB/s.
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const CollectiveCheck* check = find_collective_check("dgx1_v100", CollectiveKind::kAllReduce, 2, gib);
  ASSERT_NE(check, nullptr);
  EXPECT_NEAR(check->measured_seconds, 0.04761, 1e-5);
  EXPECT_EQ(check->algorithm, "ring");
  EXPECT_EQ(check->protocol, "Simple");
  EXPECT_NEAR(check->predicted_seconds, 15.2e-6 + gib / 22.55e9, 1e-9);
  EXPECT_NEAR(check->relative_error(), (15.2e-6 + gib / 22.55e9 - 0.04761) / 0.04761, 1e-6);
}

TEST(CollectiveValidation, EachCurveOnceUnderTheFirstTemplateThatNamesIt) {
  // dgx1_v100 and dgx1_v100_32gb name the same vTrain file: its curves are checked under the
  // first in id order only. Every vTrain V100 curve, 2..8 GPUs, 1 MiB..1 GiB.
  int dgx1 = 0;
  for (const CollectiveCheck& c : bundled_collective_checks()) {
    EXPECT_NE(c.cluster, "dgx1_v100_32gb");
    EXPECT_GT(c.measured_seconds, 0);
    EXPECT_GT(c.predicted_seconds, 0);
    if (c.cluster == "dgx1_v100") ++dgx1;
  }
  EXPECT_GT(dgx1, 7 * 10);
  EXPECT_NE(find_collective_check("dgx1_v100", CollectiveKind::kAllReduce, 8, 1024.0 * 1024.0), nullptr);
}

TEST(CollectiveValidation, CurvesAcrossMachinesRunOnTheClusterChecksJsonGives) {
  // hardware_profiles/collectives/checks.json: h100_ib_2node_ring, two dgx_h100 machines on
  // ib_ndr, NCCL_ALGO=Ring (NCCL's ring, never its tree); the log's 8 GiB row, 41015.0 us
  // (logs/nccltests_h100-ib-ndr-2node-ring.log). 16 GPUs: 8 of each machine.
  const double eight_gib = 8.0 * 1024 * 1024 * 1024;
  const CollectiveCheck* check =
      find_collective_check("h100_ib_2node_ring", CollectiveKind::kAllReduce, 16, eight_gib);
  ASSERT_NE(check, nullptr);
  EXPECT_NEAR(check->measured_seconds, 41015.0e-6, 1e-9);
  EXPECT_NE(check->algorithm, "tree");
  // The other runs on that cluster take NCCL's choice; at 1 MiB over 8 machines its tree.
  const CollectiveCheck* small = find_collective_check("h100_ib_8node", CollectiveKind::kAllReduce, 64, 1024.0 * 1024);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->algorithm, "tree");
}

CollectiveCheck synthetic_collective_check(double bytes, double measured, double predicted) {
  CollectiveCheck check;
  check.cluster = "t";
  check.gpus = 4;
  check.bytes = bytes;
  check.measured_seconds = measured;
  check.predicted_seconds = predicted;
  return check;
}

TEST(CollectiveValidation, SummaryMeansAndMediansOfAbsoluteErrors) {
  // |errors|: 4 KiB 10%, 2 MiB 20%, 64 MiB 30%, 1 GiB 40%. All four: mean (10 + 20 + 30 + 40) / 4
  // = 25%, median (20 + 30) / 2 = 25%; from 1 MiB (20, 30, 40): mean 30%, median 30%. Bands:
  // <64K 10%, 64K-1M none, 1M-16M 20%, 16M-256M 30%, >=256M 40%.
  const double mib = 1024.0 * 1024.0;
  std::vector<CollectiveCheck> checks = {synthetic_collective_check(4096, 1.0, 1.1), synthetic_collective_check(2 * mib, 1.0, 0.8),
                                         synthetic_collective_check(64 * mib, 1.0, 1.3), synthetic_collective_check(1024 * mib, 1.0, 0.6)};
  const std::string table = collective_check_table(checks, false);
  EXPECT_NE(table.find("Collectives: mean |error| 25.0%, median 25.0% over 4 measured points; from 1 MiB: mean "
                       "30.0%, median 30.0% over 3"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("10.0%         -     20.0%     30.0%     40.0%     25.0%"), std::string::npos) << table;
  EXPECT_EQ(table.find("predicted us"), std::string::npos);
  EXPECT_NE(collective_check_table(checks, true).find("predicted us"), std::string::npos);
}

}  // namespace
}  // namespace placesim
