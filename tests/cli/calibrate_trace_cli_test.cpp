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

}  // namespace
}  // namespace placesim
