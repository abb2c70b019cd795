// `calibrate --from-trace` (sim/calibration/kineto_trace.h): a hand-written PyTorch profiler trace
// in Kineto's Chrome-trace layout, each kernel paired with its operator by the launch call's time
// (or by "External id"), shapes read from "Input Dims", "Input Strides" and "Concrete Inputs", the
// median of repeated calls, and what is left out and why.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/calibration/kernel_table.h"
#include "sim/calibration/kineto_trace.h"
#include "sim/core/input_error.h"

namespace placesim {
namespace {

namespace fs = std::filesystem;

fs::path write_trace(const std::string& name, const std::string& text) {
  fs::path path = fs::temp_directory_path() / ("placesim_kineto_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path;
}

std::string op(const std::string& name, double ts, double dur, const std::string& args) {
  return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "pid": 7, "tid": 7, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {)" + args + "}},\n";
}

std::string launch(double ts, int correlation) {
  return R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": )" +
         std::to_string(ts) + R"(, "dur": 2, "args": {"correlation": )" + std::to_string(correlation) + "}},\n";
}

std::string kernel(const std::string& name, double dur, const std::string& ids) {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": 7, "ts": 5000, "dur": )" +
         std::to_string(dur) + R"(, "args": {)" + ids + "}},\n";
}

/// One training step's worth of events: three Linear forwards (addmm with a transposed weight,
/// kernels of 10, 12 and 30 us), a Winograd forward convolution, a strided backward convolution,
/// a ReLU, a half-precision bmm found only by External id, and a kernel with no operator.
std::string step_trace() {
  std::string events = op("ProfilerStep#1", 0, 10000, R"("External id": 1)");
  const std::string addmm_args =
      R"("External id": 3, "Input Dims": [[256], [64, 128], [128, 256], [], []],
         "Input type": ["float", "float", "float", "Scalar", "Scalar"],
         "Input Strides": [[1], [128, 1], [1, 128], [], []])";
  const double durations[] = {10, 12, 30};
  for (int i = 0; i < 3; ++i) {
    const double t = 100 + 100 * i;
    events += op("aten::linear", t, 60, R"("External id": 2, "Input Dims": [[64, 128], [256, 128], [256]])");
    events += op("aten::addmm", t + 2, 50, addmm_args);
    events += launch(t + 10, 10 + i);
    events += kernel("ampere_sgemm_64x32_sliced1x4_tn", durations[i], R"("correlation": )" + std::to_string(10 + i));
  }
  events += op("aten::cudnn_convolution", 1000, 100,
               R"("External id": 20, "Input Dims": [[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], []],
                  "Input type": ["float", "float", "ScalarList", "ScalarList", "ScalarList", "Int", "Scalar", "Scalar", "Scalar"],
                  "Concrete Inputs": ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"])");
  events += launch(1010, 20) + launch(1020, 21) + launch(1030, 22);
  events += kernel("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::Params)",
                   5, R"("correlation": 20)");
  events += kernel("void cudnn::winograd_nonfused::winogradForwardFilter4x4<float, float>()", 3, R"("correlation": 21)");
  events += kernel("maxwell_sgemm_128x64_nn", 20, R"("correlation": 22)");
  events += op("aten::convolution_backward", 2000, 300,
               R"("External id": 30, "Input Dims": [[8, 64, 28, 28], [8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], [], []],
                  "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Int", "ScalarList"],
                  "Concrete Inputs": ["", "", "", "[64]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, True]"])");
  events += launch(2010, 30) + launch(2020, 31) + launch(2030, 32);
  events += kernel("sm80_xmma_dgrad_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw", 40, R"("correlation": 30)");
  events += kernel("sm80_xmma_wgrad_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw", 50, R"("correlation": 31)");
  events += kernel("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)", 2, R"("correlation": 32)");
  events += op("aten::relu", 3000, 20, R"("External id": 40, "Input Dims": [[8, 64, 56, 56]], "Input type": ["float"])");
  events += launch(3005, 40);
  events += kernel("void at::native::vectorized_elementwise_kernel<4>()", 7, R"("correlation": 40)");
  events += op("aten::bmm", 4000, 20,
               R"("External id": 50, "Input Dims": [[12, 128, 64], [12, 64, 128]], "Input type": ["c10::Half", "c10::Half"])");
  events += kernel("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", 9, R"("External id": 50)");
  events += kernel("void orphan_kernel()", 4, "");
  events.resize(events.size() - 2);  // the last ",\n"
  return R"({"schemaVersion": 1, "traceEvents": [)" + events + "]}";
}

// An NCHW convolution on tensor cores: cuDNN transposes around its NHWC kernel. The row keeps the
// convolution's own kernel (20 us); the transposes (4 + 6 us) are left out and counted, since the
// cost model adds them from the scenario's memory_format.
TEST(KinetoTrace, AConvolutionsLayoutTransposesAreNotItsTime) {
  std::string events;
  events += op("aten::cudnn_convolution", 1000, 100,
               R"("External id": 20, "Input Dims": [[8, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], [], [], []],
                  "Input type": ["float", "float", "ScalarList", "ScalarList", "ScalarList", "Int", "Scalar", "Scalar", "Scalar"],
                  "Concrete Inputs": ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"])");
  events += launch(1010, 20) + launch(1020, 21) + launch(1030, 22);
  events += kernel("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>(cudnn::ops::nchw2nhwc_params_t)",
                   4, R"("correlation": 20)");
  events += kernel("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", 20, R"("correlation": 21)");
  events += kernel("void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false>(cudnn::ops::nhwc2nchw_params_t)",
                   6, R"("correlation": 22)");
  events.resize(events.size() - 2);
  const KinetoTraceTable table =
      read_kineto_trace(write_trace("nchw.json", R"({"schemaVersion": 1, "traceEvents": [)" + events + "]}"));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].op, "conv_fwd");
  EXPECT_EQ(table.rows[0].precision, Precision::kTf32);
  EXPECT_DOUBLE_EQ(table.rows[0].median_seconds, 20e-6);
  EXPECT_EQ(table.kernels_used, 1);
  EXPECT_EQ(table.skipped.at(
                "aten::cudnn_convolution: NCHW <-> NHWC layout transposes (the model adds them under memory_format nchw)"),
            2);
}

TEST(KinetoTrace, PairsEachKernelWithItsOperatorAndTakesTheMedianOfACallsKernels) {
  const fs::path path = write_trace("step.json", step_trace());
  const KinetoTraceTable table = read_kineto_trace(path);
  EXPECT_EQ(table.kernel_events, 3 + 3 + 3 + 1 + 1 + 1);
  // Three addmm + three forward conv + dgrad + wgrad + bmm.
  EXPECT_EQ(table.kernels_used, 3 + 3 + 1 + 1 + 1);
  ASSERT_EQ(table.rows.size(), 5u);

  const auto find = [&](const std::string& what) -> const TraceKernelRow& {
    for (const auto& row : table.rows) {
      if (row.op == what) return row;
    }
    ADD_FAILURE() << "no " << what << " row";
    return table.rows.front();
  };
  // addmm(bias, x[64 x 128], W^T) with W stored [256 x 128]: strides (1, 128) for the 128 x 256
  // operand make it column-major, i.e. tb = 1. Median of 10, 12, 30 us = 12 us.
  const TraceKernelRow& gemm = find("gemm");
  EXPECT_EQ(gemm.shape, "m=64;n=256;k=128;ta=0;tb=1");
  EXPECT_EQ(gemm.precision, Precision::kFp32);
  EXPECT_EQ(gemm.algorithm, "cublas");
  EXPECT_EQ(gemm.calls, 3);
  EXPECT_DOUBLE_EQ(gemm.median_seconds, 12e-6);
  EXPECT_EQ(gemm.aten_op, "aten::addmm");

  // cudnn_convolution(self, weight, padding, stride, dilation, groups, ...): the three kernels
  // together, 5 + 3 + 20 us, and Winograd (non-fused) by their names.
  const TraceKernelRow& forward = find("conv_fwd");
  EXPECT_EQ(forward.shape, "n=8;c=64;h=56;w=56;k=64;r=3;s=3;pad_h=1;pad_w=1;stride_h=1;stride_w=1");
  EXPECT_EQ(forward.algorithm, "WINOGRAD_NONFUSED");
  EXPECT_DOUBLE_EQ(forward.median_seconds, 28e-6);

  // convolution_backward(grad_output, input, weight, bias_sizes, stride [2, 2], padding [1, 1], ...):
  // the dgrad kernel is the data gradient, the wgrad kernel the filter gradient; the bias
  // reduction is neither and is left out.
  const std::string strided = "n=8;c=64;h=56;w=56;k=64;r=3;s=3;pad_h=1;pad_w=1;stride_h=2;stride_w=2";
  EXPECT_EQ(find("conv_bwd_data").shape, strided);
  EXPECT_DOUBLE_EQ(find("conv_bwd_data").median_seconds, 40e-6);
  EXPECT_EQ(find("conv_bwd_filter").shape, strided);
  EXPECT_DOUBLE_EQ(find("conv_bwd_filter").median_seconds, 50e-6);

  // The bmm has no launch event: its kernel names it by External id. Half inputs: fp16.
  const TraceKernelRow& bmm = find("bmm");
  EXPECT_EQ(bmm.shape, "batch=12;m=128;n=128;k=64;ta=0;tb=0");
  EXPECT_EQ(bmm.precision, Precision::kFp16);

  EXPECT_EQ(table.skipped.at("aten::relu: not a GEMM or convolution"), 1);
  EXPECT_EQ(table.skipped.at("no operator around its launch (record with ProfilerActivity.CPU)"), 1);
  EXPECT_EQ(table.skipped.at("aten::convolution_backward: kernel named neither dgrad nor wgrad (bias gradient, layout)"),
            1);
  fs::remove(path);
}

TEST(KinetoTrace, TheWrittenTableIsWhatTheKernelFitReads) {
  const fs::path trace = write_trace("fit.json", step_trace());
  const fs::path csv = write_trace("fit.csv", kineto_trace_table_csv(read_kineto_trace(trace), "h200-sxm-141gb",
                                                                     "step, rank 0.json"));
  const KernelTable table = read_kernel_table(csv, "h200-sxm-141gb");
  ASSERT_EQ(table.rows.size(), 5u);
  for (const KernelMeasurement& row : table.rows) {
    if (row.op == "conv_fwd") {
      ASSERT_TRUE(row.algorithm.has_value());
      EXPECT_EQ(*row.algorithm, ConvAlgorithm::kWinogradNonfused);
      EXPECT_EQ(row.shape.conv.n, 8);
      EXPECT_EQ(row.shape.conv.stride_h, 1);
    }
    if (row.op == "conv_bwd_data") {
      EXPECT_EQ(row.pass, kBackwardDataPass);
      EXPECT_EQ(row.shape.conv.stride_w, 2);
    }
    if (row.op == "gemm") {
      EXPECT_TRUE(row.shape.gemm.transpose_b);
      EXPECT_DOUBLE_EQ(row.seconds, 12e-6);
      // The source names the trace (commas and all: it is the last column) and the calls.
      EXPECT_EQ(row.source, "step, rank 0.json: median of 3 call(s) of aten::addmm (ampere_sgemm_64x32_sliced1x4_tn)");
    }
    if (row.op == "bmm") {
      EXPECT_EQ(row.precision, Precision::kFp16);
    }
  }
  fs::remove(trace);
  fs::remove(csv);
}

TEST(KinetoTrace, TensorFloat32KernelsMakeTf32Rows) {
  std::string events = op("aten::mm", 0, 50,
                          R"("External id": 1, "Input Dims": [[512, 512], [512, 512]], "Input type": ["float", "float"])");
  events += launch(10, 1);
  events += kernel("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16", 30, R"("correlation": 1)");
  events.resize(events.size() - 2);
  const fs::path path = write_trace("tf32.json", "[" + events + "]");  // a bare event array
  const KinetoTraceTable table = read_kineto_trace(path);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].precision, Precision::kTf32);
  EXPECT_EQ(table.rows[0].shape, "m=512;n=512;k=512;ta=0;tb=0");
  fs::remove(path);
}

TEST(KinetoTrace, WhatIsNotAUsableTraceIsAnInputErrorSayingWhy) {
  const auto message_of = [](const std::string& name, const std::string& text) {
    const fs::path path = write_trace(name, text);
    std::string message;
    try {
      read_kineto_trace(path);
    } catch (const InputError& error) {
      EXPECT_EQ(error.file(), path.string());
      message = error.json_path() + ": " + error.message();
    }
    fs::remove(path);
    return message;
  };
  EXPECT_NE(message_of("object.json", R"({"events": []})").find("/traceEvents: expected a Chrome trace"),
            std::string::npos);
  // CPU-only profile: no kernels.
  std::string cpu = op("aten::mm", 0, 5, "");
  cpu.resize(cpu.size() - 2);
  EXPECT_NE(message_of("cpu.json", "{\"traceEvents\": [" + cpu + "]}")
                .find("no GPU kernels"),
            std::string::npos);
  std::string relu = op("aten::relu", 0, 20, R"("External id": 1, "Input type": ["float"])") + launch(5, 1) +
                     kernel("elementwise", 3, R"("correlation": 1)");
  relu.resize(relu.size() - 2);
  EXPECT_NE(message_of("relu.json", "{\"traceEvents\": [" + relu + "]}")
                .find("no GEMM or convolution kernel with its shapes among 1 GPU kernels; aten::relu: not a GEMM or "
                      "convolution (1 kernels)"),
            std::string::npos);
  // A convolution recorded without its Concrete Inputs (PyTorch before 2.0) cannot be read.
  std::string old = op("aten::cudnn_convolution", 0, 20,
                       R"("External id": 1, "Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3]], "Input type": ["float", "float"])") +
                    launch(5, 1) + kernel("implicit_convolve_sgemm", 3, R"("correlation": 1)");
  old.resize(old.size() - 2);
  EXPECT_NE(message_of("old.json", "{\"traceEvents\": [" + old + "]}").find("Concrete Inputs"), std::string::npos);
  EXPECT_NE(message_of("bad_ts.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": -4}]})")
                .find("/traceEvents/0: expected finite \"ts\" and \"dur\" >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace placesim
