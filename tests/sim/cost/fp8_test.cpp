// FP8 training (docs/llm-planning.md, "FP8") against hand-derived numbers: a GEMM on the H100
// roofline at the FP8 peak with 1-byte operands, the bytes per parameter of a tiny GPT with Adam,
// the refusal of fp8 on an A100 and the precision's round trip through a plan file.
#include <gtest/gtest.h>

#include <filesystem>

#include "models/zoo.h"
#include "sim/cluster/hardware_catalog.h"
#include "sim/core/input_error.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/kernel_cost.h"
#include "sim/cost/gemm_model.h"
#include "sim/plan/kernel_precision.h"
#include "sim/plan/plan_json.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/plan_builder.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

constexpr double kRelative = 1e-12;

ClusterDevice catalog_device(const std::string& id) {
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  Json where = id;
  ClusterDevice device;
  device.spec = catalog.device(id, JsonReader(where, "test", "/device"));
  return device;
}

// One m x n x k GEMM on the H100 SXM roofline (hardware_profiles/devices/h100-sxm5-80gb.json:
// datasheet peaks bf16 989.4 TFLOP/s and fp8 1,979 TFLOP/s dense, 3.35 TB/s x 0.85, matmul
// efficiency 0.65, 5 us launch). Time = max(2mnk / (peak x 0.65), bytes / (3.35e12 x 0.85)) + 5 us,
// bytes = (mk + kn + mn) x 2 in bf16 and x 1 in fp8. The profile's kernel model (fitted on
// measured GEMMs) is set aside: this is the roofline a profile without one falls back to.
TEST(Fp8, AGemmOnTheH100RooflineRunsAtTheFp8PeakWithOneByteOperands) {
  ClusterDevice h100 = catalog_device("h100-sxm5-80gb");
  h100.spec.kernel_model.reset();
  const double bf16_peak = 989.4e12, fp8_peak = 1979e12, bandwidth = 3.35e12 * 0.85, launch = 5e-6;
  const double efficiency = 0.65;
  ASSERT_DOUBLE_EQ(h100.spec.peak_for(Precision::kBf16), bf16_peak);
  ASSERT_DOUBLE_EQ(h100.spec.peak_for(Precision::kFp8), fp8_peak);
  auto gemm_task = [](double m, double n, double k) {
    // The graph counts bytes at the run's element size, 2 for bf16 and fp8 alike.
    return testing::compute_task(0, 2 * m * n * k, 2 * (m * k + k * n + m * n), OpKind::kMatMul);
  };
  // Compute-bound: 8192^3. bf16 1.7096 ms against 0.0706 ms of bytes; fp8 twice as fast.
  {
    const double m = 8192, n = 8192, k = 8192;
    const double flops = 2 * m * n * k;
    const Task task = gemm_task(m, n, k);
    const double bf16 = flops / (bf16_peak * efficiency) + launch;
    const double fp8 = flops / (fp8_peak * efficiency) + launch;
    EXPECT_NEAR(compute_seconds(task, Precision::kBf16, MemoryFormat::kNchw, h100), bf16, bf16 * kRelative);
    EXPECT_NEAR(compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, h100), fp8, fp8 * kRelative);
    // Without the launch, the ratio of the peaks: 989.4 / 1979 = 0.49995.
    EXPECT_NEAR((compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, h100) - launch) /
                    (compute_seconds(task, Precision::kBf16, MemoryFormat::kNchw, h100) - launch),
                bf16_peak / fp8_peak, 1e-9);
  }
  // Memory-bound: 8192 x 8192 x 16 (intensity 16 FLOP/byte in bf16, far below 989.4e12 x 0.65 /
  // 2.85e12 = 226): the bytes halve with 1-byte operands.
  {
    const double m = 8192, n = 8192, k = 16;
    const Task task = gemm_task(m, n, k);
    const double bytes = 2 * (m * k + k * n + m * n);
    const double bf16 = bytes / bandwidth + launch;
    const double fp8 = bytes / 2 / bandwidth + launch;
    EXPECT_NEAR(compute_seconds(task, Precision::kBf16, MemoryFormat::kNchw, h100), bf16, bf16 * kRelative);
    EXPECT_NEAR(compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, h100), fp8, fp8 * kRelative);
  }
  // Everything else stays in bf16: a softmax (reduction) and a layer norm cost the same.
  for (OpKind kind : {OpKind::kReduction, OpKind::kNormalization, OpKind::kElementwise}) {
    const Task task = testing::compute_task(0, 1e9, 1e9, kind);
    EXPECT_DOUBLE_EQ(compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, h100), compute_seconds(task, Precision::kBf16, MemoryFormat::kNchw, h100));
  }
}

// A kernel model without an fp8 fit prices an fp8 GEMM at the FP8 peak with its bf16 efficiency
// and 1-byte operands.
TEST(Fp8, AKernelModelWithoutAnFp8FitUsesItsBf16EfficiencyAtTheFp8Peak) {
  KernelModel model;
  model.sm_count = 132;
  model.gemm_efficiency = {{Precision::kFp32, 0.5}, {Precision::kBf16, 0.8}};
  model.tile_overhead_k = 8;
  EXPECT_DOUBLE_EQ(model.gemm_efficiency_for(Precision::kFp8), 0.8);
  DeviceSpec spec = testing::round_gpu(1e13, 1e12);
  spec.peak_flops_per_second[Precision::kBf16] = 1e14;
  spec.peak_flops_per_second[Precision::kFp8] = 2e14;
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  GemmShape gemm;
  gemm.m = 4096;
  gemm.n = 4096;
  gemm.k = 4096;
  Task task = testing::compute_task(0, 2.0 * 4096 * 4096 * 4096);
  task.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
  task.kernel_passes = kForwardPass;
  const GemmDevice fp8_device{2e14, 1e12, spec.kernel_model.get()};
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kFp8, spec),
                   estimate_gemm(gemm, 1, Precision::kFp8, fp8_device).seconds);
}

// Transformer Engine runs only its linear layers' GEMMs in FP8: attention computes in bf16 unless
// its FP8 attention is on (fp8_dpa, off by default), fused or as batched GEMMs. Which precision
// each kernel takes, and a fused attention kernel and a batched GEMM on the H100's kernel model
// costing the same in an fp8 run as in a bf16 one, where a dense layer's GEMM differs.
TEST(Fp8, AttentionComputesInBf16AndOnlyLinearLayersGemmsInFp8) {
  GemmShape dense;
  dense.m = 4096;
  dense.n = 4096;
  dense.k = 4096;
  GemmShape batched = dense;
  batched.batch = 32;
  batched.m = 2048;
  batched.n = 2048;
  batched.k = 128;
  batched.samples_in_batch = true;
  AttentionShape attention;
  attention.batch = 32;
  attention.queries = attention.keys = 2048;
  attention.head_dim = 128;
  attention.causal = true;
  const KernelShape dense_kernel = KernelShape::of_gemm(dense), batched_kernel = KernelShape::of_gemm(batched),
                    attention_kernel = KernelShape::of_attention(attention);
  EXPECT_EQ(kernel_precision(Precision::kFp8, OpKind::kMatMul, &dense_kernel), Precision::kFp8);
  EXPECT_EQ(kernel_precision(Precision::kFp8, OpKind::kMatMul), Precision::kFp8);  // no shape: a GEMM
  EXPECT_EQ(kernel_precision(Precision::kFp8, OpKind::kMatMul, &batched_kernel), Precision::kBf16);
  EXPECT_EQ(kernel_precision(Precision::kFp8, OpKind::kMatMul, &attention_kernel), Precision::kBf16);
  EXPECT_EQ(kernel_precision(Precision::kFp8, OpKind::kElementwise), Precision::kBf16);
  EXPECT_EQ(kernel_precision(Precision::kBf16, OpKind::kMatMul, &dense_kernel), Precision::kBf16);
  EXPECT_DOUBLE_EQ(kernel_bytes_scale(Precision::kFp8, OpKind::kMatMul, &dense_kernel), 0.5);
  EXPECT_DOUBLE_EQ(kernel_bytes_scale(Precision::kFp8, OpKind::kMatMul, &attention_kernel), 1.0);

  const ClusterDevice h100 = catalog_device("h100-sxm5-80gb");
  auto task_of = [](const KernelShape& kernel) {
    Task task = testing::compute_task(0, 1e12);
    task.kernel = std::make_shared<const KernelShape>(kernel);
    task.kernel_passes = kForwardPass | kBackwardPasses;
    return task;
  };
  for (const KernelShape* kernel : {&batched_kernel, &attention_kernel}) {
    const Task task = task_of(*kernel);
    EXPECT_DOUBLE_EQ(compute_seconds(task, Precision::kFp8, MemoryFormat::kNchw, h100),
                     compute_seconds(task, Precision::kBf16, MemoryFormat::kNchw, h100))
        << kernel->describe();
  }
  const Task linear = task_of(dense_kernel);
  EXPECT_LT(kernel_model_seconds(linear, Precision::kFp8, h100.spec), kernel_model_seconds(linear, Precision::kBf16, h100.spec));
}

// Tiny GPT, fp8 with Adam. Every parameter: bf16 weight 2 + bf16 gradient 2 + fp32 master 4 +
// two fp32 Adam moments 8 = 16 bytes (ZeRO's mixed-precision count); a matmul's weights also
// keep an FP8 copy and its FP8 transpose, 1 + 1: 18 bytes per GEMM parameter.
TEST(Fp8, ATinyGptWithAdamHolds18BytesPerGemmParameterAnd16PerOther) {
  Json name = "gpt";
  Json parameters = Json::parse(R"({"layers": 2, "hidden": 64, "heads": 4, "sequence": 32, "vocabulary": 100})");
  OpGraph graph = build_zoo_model(JsonReader(name, "t", "/model/zoo"), JsonReader(parameters, "t"), 4,
                                  element_bytes(Precision::kFp8));
  double gemm_parameters = 0, other_parameters = 0;
  for (OpId v = 0; v < graph.size(); ++v) {
    const Op& op = graph.op(v);
    if (op.parameter_count > 0) {
      EXPECT_EQ(op.dtype_bytes, 2) << op.name;  // weights stay bf16
    }
    (op.kind == OpKind::kMatMul ? gemm_parameters : other_parameters) += op.parameter_count;
  }
  ASSERT_GT(gemm_parameters, 0);
  ASSERT_GT(other_parameters, 0);  // embeddings and layer norms
  DeviceSpec spec = testing::round_gpu();
  spec.peak_flops_per_second[Precision::kFp8] = 2e12;
  Cluster cluster = testing::gpus(1, spec);
  RunOptions run;
  run.precision = Precision::kFp8;
  run.optimizer = Optimizer::kAdam;
  run.batch_size = 4;
  ExecutionPlan plan = build_plan(graph, Placement{std::vector<DeviceId>(graph.size(), 0), {}}, cluster, run, "gpt");
  const StaticMemory& memory = plan.static_memory[0];
  EXPECT_DOUBLE_EQ(memory.parameter_bytes, (2 + 2) * gemm_parameters + 2 * other_parameters);
  EXPECT_DOUBLE_EQ(memory.gradient_bytes, 2 * (gemm_parameters + other_parameters));
  EXPECT_DOUBLE_EQ(memory.optimizer_state_bytes, 12 * (gemm_parameters + other_parameters));
  EXPECT_DOUBLE_EQ(memory.total(), 18 * gemm_parameters + 16 * other_parameters);
}

// An A100 has no FP8 tensor cores (no "fp8" in its profile): fp8 is refused at /run/precision,
// naming the profile and its file; the same scenario on a DGX H100 loads.
TEST(Fp8, IsRefusedOnAnA100WithTheFileAndPath) {
  const std::string text = R"({
    "model": {"zoo": "gpt", "parameters": {"layers": 1, "hidden": 64, "heads": 4, "sequence": 32, "vocabulary": 100}},
    "cluster": {"template": "dgx_a100"},
    "strategy": {"parallelism": {"data": 8}},
    "run": {"batch_size": 1, "precision": "fp8", "optimizer": "adam"}
  })";
  try {
    testing::scenario_from_text(text);
    FAIL() << "fp8 on an A100 was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), "test.json");
    EXPECT_EQ(error.json_path(), "/run/precision");
    EXPECT_NE(error.message().find("a100-sxm4-40gb (8 devices, hardware_profiles/devices/a100-sxm4-40gb.json)"),
              std::string::npos)
        << error.message();
    EXPECT_NE(error.message().find("\"fp8\""), std::string::npos) << error.message();
  }
  std::string on_h100 = text;
  on_h100.replace(on_h100.find("dgx_a100"), 8, "dgx_h100");
  EXPECT_EQ(testing::scenario_from_text(on_h100).run.precision, Precision::kFp8);
}

// The precision survives a plan file, and a plan file cannot carry fp8 onto a device without it.
TEST(Fp8, ThePrecisionRoundTripsThroughAPlanFile) {
  DeviceSpec spec = testing::round_gpu();
  spec.peak_flops_per_second[Precision::kFp8] = 2e12;
  Cluster cluster = testing::gpus(1, spec);
  ExecutionPlan plan = testing::empty_plan(cluster);
  plan.precision = Precision::kFp8;
  testing::add(plan, testing::compute_task(0, 1e9));
  Json written = write_plan_json(plan, cluster);
  EXPECT_EQ(written["precision"], "fp8");
  PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  EXPECT_EQ(read.plan.precision, Precision::kFp8);
  EXPECT_EQ(write_plan_json(read.plan, read.cluster).dump(), written.dump());

  Cluster without = testing::gpus(1);
  Json refused = write_plan_json(plan, without);
  try {
    read_plan_json(JsonReader(refused, "plan.json"));
    FAIL() << "fp8 on a device without an fp8 peak was accepted";
  } catch (const InputError& error) {
    EXPECT_EQ(error.file(), "plan.json");
    EXPECT_EQ(error.json_path(), "/precision");
    EXPECT_NE(error.message().find("test-gpu"), std::string::npos) << error.message();
  }
}

}  // namespace
}  // namespace placesim
