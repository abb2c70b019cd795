// `placesim calibrate --from-trace TRACE.json --device ID -o TABLE.csv` as a user runs it: the
// table written, what went into it and what was left out on standard error, and the next command;
// bad command lines exit 2. The trace reader itself: tests/sim/calibration/kineto_trace_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/calibration/kernel_table.h"
#include "tests/cli/run_placesim.h"

namespace placesim {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::make_temp_directory;
using testing::run_placesim;

/// Two calls of addmm (kernels of 10 and 14 us: median 12 us) and one ReLU, in Kineto's layout.
constexpr const char* kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 0, "dur": 50,
   "args": {"External id": 1, "Input Dims": [[256], [64, 128], [128, 256], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 2, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x32_nn", "pid": 0, "tid": 7, "ts": 100, "dur": 10, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 200, "dur": 50,
   "args": {"External id": 2, "Input Dims": [[256], [64, 128], [128, 256], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 210, "dur": 2, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x32_nn", "pid": 0, "tid": 7, "ts": 300, "dur": 14, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 400, "dur": 20, "args": {"External id": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 405, "dur": 2, "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "elementwise_kernel", "pid": 0, "tid": 7, "ts": 500, "dur": 3, "args": {"correlation": 3}}
]})";

TEST(CalibrateTraceCli, WritesTheTableAndSaysWhatWentInAndWhatWasLeftOut) {
  const fs::path directory = make_temp_directory();
  const fs::path trace = directory / "step.json";
  std::ofstream(trace) << kTrace;
  const CommandResult ok = run_placesim(
      {"calibrate", "--from-trace", trace.string(), "--device", "p100-pcie-16gb", "-o", (directory / "t.csv").string()});
  EXPECT_EQ(ok.exit_status, 0) << ok.output;
  EXPECT_NE(ok.output.find("1 distinct kernels of p100-pcie-16gb from 2 of the trace's 3 GPU kernels (gemm 1)"),
            std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("left out 1 kernel(s): aten::relu: not a GEMM or convolution"), std::string::npos);
  EXPECT_NE(ok.output.find("placesim calibrate --from-kernels"), std::string::npos);
  const KernelTable table = read_kernel_table(directory / "t.csv");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(table.rows[0].seconds, 12e-6);

  const CommandResult no_device = run_placesim({"calibrate", "--from-trace", trace.string(), "-o", "t.csv"});
  EXPECT_EQ(no_device.exit_status, 2);
  EXPECT_NE(no_device.output.find("--from-trace needs --device ID"), std::string::npos) << no_device.output;
  const CommandResult not_csv = run_placesim(
      {"calibrate", "--from-trace", trace.string(), "--device", "x", "-o", (directory / "t.json").string()});
  EXPECT_EQ(not_csv.exit_status, 2);
  EXPECT_NE(not_csv.output.find("expected TABLE.csv"), std::string::npos) << not_csv.output;
  fs::remove_all(directory);
}

// The next step a user takes with their own table: how well the shipped kernel model predicts
// it (`--check-kernels` alone writes nothing, so needs no -o).
TEST(CalibrateTraceCli, ChecksTheShippedKernelModelOnTheUsersOwnTable) {
  const fs::path directory = make_temp_directory();
  const fs::path trace = directory / "step.json";
  std::ofstream(trace) << kTrace;
  const fs::path table = directory / "t.csv";
  ASSERT_EQ(run_placesim({"calibrate", "--from-trace", trace.string(), "--device", "p100-pcie-16gb", "-o",
                          table.string()})
                .exit_status,
            0);
  const CommandResult check =
      run_placesim({"calibrate", "--check-kernels", table.string(), "--device", "p100-pcie-16gb"});
  EXPECT_EQ(check.exit_status, 0) << check.output;
  EXPECT_NE(check.output.find("p100-pcie-16gb's kernel model (fitted on hardware_profiles/kernels/"), std::string::npos)
      << check.output;
  EXPECT_NE(check.output.find("(never fitted on):"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("  gemm                1 rows"), std::string::npos) << check.output;
  // --predictions writes the checked row beside the model's time (held out: the fit never saw it).
  const fs::path predictions = directory / "predictions.csv";
  ASSERT_EQ(run_placesim({"calibrate", "--check-kernels", table.string(), "--device", "p100-pcie-16gb",
                          "--predictions", predictions.string()})
                .exit_status,
            0);
  std::ifstream written(predictions);
  std::string header, row, extra;
  std::getline(written, header);
  std::getline(written, row);
  EXPECT_EQ(header.rfind("device,op,shape,precision,measured_seconds,predicted_seconds,ratio,held_out", 0), 0u) << header;
  EXPECT_EQ(row.rfind("p100-pcie-16gb,gemm,", 0), 0u) << row;
  EXPECT_FALSE(std::getline(written, extra)) << extra;
  // Rows of another chip are not a sibling's: exit 2, naming both chips.
  const CommandResult not_sibling =
      run_placesim({"calibrate", "--from-kernels", table.string(), "--device", "p100-pcie-16gb", "--sibling-devices",
                    "v100-sxm2-16gb", "-o", (directory / "p.json").string()});
  EXPECT_EQ(not_sibling.exit_status, 2);
  EXPECT_NE(not_sibling.output.find("is not another board of p100-pcie-16gb's chip"), std::string::npos)
      << not_sibling.output;

  const CommandResult other_device = run_placesim({"calibrate", "--check-kernels", table.string(), "--device", "k80"});
  EXPECT_EQ(other_device.exit_status, 2);
  EXPECT_NE(other_device.output.find("no row for device \"k80\""), std::string::npos) << other_device.output;
  const CommandResult roofline =
      run_placesim({"calibrate", "--check-kernels", table.string(), "--device", "a100-pcie-40gb"});
  EXPECT_EQ(roofline.exit_status, 2);
  EXPECT_NE(roofline.output.find("has no kernel model to check"), std::string::npos) << roofline.output;
  const CommandResult no_output = run_placesim({"calibrate", "--from-trace", trace.string(), "--device", "p100-pcie-16gb"});
  EXPECT_EQ(no_output.exit_status, 2);
  EXPECT_NE(no_output.output.find("-o FILE is required"), std::string::npos) << no_output.output;
  fs::remove_all(directory);
}

}  // namespace
}  // namespace placesim
