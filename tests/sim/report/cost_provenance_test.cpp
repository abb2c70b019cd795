// Where a run's compute costs come from (sim/report/cost_provenance.h): a precision the kernel
// model has no fit for says which fitted precision's efficiency prices its GEMMs, in the text
// line and the JSON entry; a fitted precision, and fp16/bf16 standing in for each other, say
// nothing more.
#include <gtest/gtest.h>

#include <memory>

#include "sim/report/cost_provenance.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::gpus;
using testing::round_gpu;

DeviceSpec fitted_gpu() {
  DeviceSpec spec = round_gpu();
  spec.peak_flops_per_second[Precision::kTf32] = 8e12;
  spec.peak_flops_per_second[Precision::kFp16] = 16e12;
  spec.peak_flops_per_second[Precision::kBf16] = 16e12;
  KernelModel model;
  model.sm_count = 10;
  model.gemm_efficiency = {{Precision::kFp32, 0.9}, {Precision::kFp16, 0.75}};
  model.fit.table = "test.csv";
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  return spec;
}

TEST(CostProvenance, APrecisionWithoutItsOwnFitNamesTheEfficiencyItBorrows) {
  const Cluster cluster = gpus(2, fitted_gpu());
  const std::vector<CostSource> tf32 = cost_sources(cluster, Precision::kTf32);
  ASSERT_EQ(tf32.size(), 1u);  // one entry per distinct profile
  EXPECT_EQ(tf32[0].gemm_efficiency_stand_in, "fp32");
  EXPECT_NE(describe(tf32[0]).find("; tf32 GEMMs: the datasheet's tf32 peak x the kernel model's fp32 GEMM efficiency, "
                                   "an estimate (no tf32 kernels measured)"),
            std::string::npos)
      << describe(tf32[0]);
  const Json entry = cost_sources_json(tf32).at(0);
  EXPECT_EQ(entry.at("gemm_efficiency_stand_in").at("precision"), "tf32");
  EXPECT_EQ(entry.at("gemm_efficiency_stand_in").at("fitted_precision"), "fp32");

  for (Precision own : {Precision::kFp32, Precision::kFp16, Precision::kBf16}) {
    SCOPED_TRACE(to_string(own));
    const CostSource source = cost_sources(cluster, own).at(0);
    EXPECT_EQ(source.gemm_efficiency_stand_in, "");
    EXPECT_EQ(describe(source).find("GEMMs: the datasheet"), std::string::npos) << describe(source);
    EXPECT_FALSE(cost_sources_json({source}).at(0).contains("gemm_efficiency_stand_in"));
  }
}

// An fp8 run's GEMMs borrow the 16-bit fit's efficiency of the FP8 peak and pay Transformer
// Engine's casts; the line says both.
TEST(CostProvenance, Fp8GemmsNameTheEfficiencyTheyBorrowAndTheirCasts) {
  DeviceSpec spec = fitted_gpu();
  spec.peak_flops_per_second[Precision::kFp8] = 32e12;
  const CostSource source = cost_sources(gpus(2, spec), Precision::kFp8).at(0);
  EXPECT_NE(describe(source).find("; fp8 GEMMs: the datasheet's dense FP8 peak x the kernel model's fp16 GEMM "
                                  "efficiency (no fp8 fit), an estimate (no FP8 kernels measured), each linear layer's "
                                  "with Transformer Engine's casts of its input and output gradient"),
            std::string::npos)
      << describe(source);
}

// A run whose convolutions keep NCHW tensors says, per device whose tensor cores run them, that
// they pay cuDNN's layout transposes; off tensor cores (fp32, or a pre-Volta GPU) and under NHWC
// it says nothing.
TEST(CostProvenance, NchwConvolutionsOnTensorCoresSayTheyPayLayoutTransposes) {
  DeviceSpec ampere = fitted_gpu();
  ampere.compute_capability = "8.0";
  const Cluster cluster = gpus(1, ampere);
  const CostSource tf32 = cost_sources(cluster, Precision::kTf32, {.nchw_convolutions = true}).at(0);
  EXPECT_TRUE(tf32.layout_transposes);
  EXPECT_NE(describe(tf32).find("its tensor-core convolutions pay cuDNN's NCHW <-> NHWC transposes"), std::string::npos)
      << describe(tf32);
  EXPECT_TRUE(cost_sources_json({tf32}).at(0).at("layout_transposes").get<bool>());
  EXPECT_FALSE(cost_sources(cluster, Precision::kFp32, {.nchw_convolutions = true}).at(0).layout_transposes);
  EXPECT_FALSE(cost_sources(cluster, Precision::kTf32, {}).at(0).layout_transposes);
  DeviceSpec pascal = ampere;
  pascal.compute_capability = "6.0";
  EXPECT_FALSE(cost_sources(gpus(1, pascal), Precision::kFp16, {.nchw_convolutions = true}).at(0).layout_transposes);

  ExecutionPlan plan;
  Task conv = testing::compute_task(0, 1e9, 0, OpKind::kConv);
  KernelShape shape;
  shape.kind = KernelKind::kConv2d;
  conv.kernel = std::make_shared<const KernelShape>(shape);
  plan.tasks.push_back(conv);
  EXPECT_TRUE(plan_kernels(plan).nchw_convolutions);
  plan.memory_format = MemoryFormat::kNhwc;
  EXPECT_FALSE(plan_kernels(plan).nchw_convolutions);
  plan.memory_format = MemoryFormat::kNchw;
  plan.tasks[0].kernel = nullptr;
  EXPECT_FALSE(plan_kernels(plan).nchw_convolutions);
  EXPECT_FALSE(plan_kernels(plan).pooling);
  plan.tasks.push_back(testing::compute_task(0, 1e6, 1e6, OpKind::kPooling));
  EXPECT_TRUE(plan_kernels(plan).pooling);
  EXPECT_FALSE(plan_kernels(plan).fused_attention);
}

// The closed-form tier has no plan of the step: the graph's ops say the same. A convolution with
// its shape in NCHW, a pooling op, a fused attention kernel; NHWC, or a convolution without a
// shape, has no layout transposes; a graph of none of them, nothing.
TEST(CostProvenance, AGraphsOpsNameTheKernelsItsPlanWouldHave) {
  auto op_of = [](const std::string& name, OpKind kind, std::optional<KernelKind> kernel) {
    Op op;
    op.name = name;
    op.kind = kind;
    if (kernel) {
      KernelShape shape;
      shape.kind = *kernel;
      op.kernel = std::make_shared<const KernelShape>(shape);
    }
    return op;
  };
  OpGraph graph;
  graph.add_op(op_of("dense", OpKind::kMatMul, KernelKind::kGemm));
  PlanKernels none = graph_kernels(graph, MemoryFormat::kNchw);
  EXPECT_FALSE(none.nchw_convolutions || none.pooling || none.fused_attention);
  graph.add_op(op_of("conv", OpKind::kConv, KernelKind::kConv2d));
  graph.add_op(op_of("pool", OpKind::kPooling, std::nullopt));
  const PlanKernels nchw = graph_kernels(graph, MemoryFormat::kNchw);
  EXPECT_TRUE(nchw.nchw_convolutions);
  EXPECT_TRUE(nchw.pooling);
  EXPECT_FALSE(nchw.fused_attention);
  EXPECT_FALSE(graph_kernels(graph, MemoryFormat::kNhwc).nchw_convolutions);
  graph.add_op(op_of("flash_attention", OpKind::kOther, KernelKind::kAttention));
  EXPECT_TRUE(graph_kernels(graph, MemoryFormat::kNhwc).fused_attention);
  OpGraph unshaped;
  unshaped.add_op(op_of("conv", OpKind::kConv, std::nullopt));
  EXPECT_FALSE(graph_kernels(unshaped, MemoryFormat::kNchw).nchw_convolutions);
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

// A borrowed model whose 16-bit efficiency a board refitted on its own GEMMs (calibrate
// --board-gemm-kernels) says so under fp16 and bf16, naming the board, its table and the held-out
// error, in the line and the JSON entry; under fp32, which the refit did not touch, it says nothing.
TEST(CostProvenance, ABoardsOwnGemmRefitIsNamedUnderThePrecisionsItSet) {
  DeviceSpec spec = fitted_gpu();
  KernelModel model = *spec.kernel_model;
  model.fit.scaled_from = "lender";
  BoardGemmRefit refit;
  refit.device = "module";
  refit.table = "own.csv";
  refit.precisions = {Precision::kFp16, Precision::kBf16};
  refit.held_out_rows = 5;
  refit.held_out_median_error = 0.029;
  model.fit.board_gemm = {refit};
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  const Cluster cluster = gpus(2, spec);
  for (Precision set : {Precision::kFp16, Precision::kBf16}) {
    SCOPED_TRACE(to_string(set));
    const CostSource source = cost_sources(cluster, set).at(0);
    ASSERT_TRUE(source.board_gemm);
    EXPECT_NE(describe(source).find("; " + to_string(set) +
                                    " GEMMs: efficiency refitted on module's own GEMM rows (own.csv): held-out 2.9% "
                                    "median over 5 rows"),
              std::string::npos)
        << describe(source);
    EXPECT_EQ(cost_sources_json({source}).at(0).at("board_gemm").at("device"), "module");
  }
  const CostSource fp32 = cost_sources(cluster, Precision::kFp32).at(0);
  EXPECT_FALSE(fp32.board_gemm);
  EXPECT_EQ(describe(fp32).find("refitted"), std::string::npos) << describe(fp32);
  EXPECT_FALSE(cost_sources_json({fp32}).at(0).contains("board_gemm"));
}

// A run with fused attention kernels says how they are priced: the device's attention fit (its
// table and error), or, without one, that they run as fast as their GEMMs (an estimate).
TEST(CostProvenance, FusedAttentionNamesItsFitOrSaysItHasNone) {
  DeviceSpec spec = fitted_gpu();
  const Cluster unfitted = gpus(1, spec);
  const CostSource without = cost_sources(unfitted, Precision::kFp16, {.fused_attention = true}).at(0);
  EXPECT_NE(describe(without).find("; fused attention: as fast as its GEMMs, an estimate"), std::string::npos)
      << describe(without);
  EXPECT_EQ(describe(cost_sources(unfitted, Precision::kFp16).at(0)).find("fused attention"), std::string::npos);
  KernelModel model = *spec.kernel_model;
  AttentionKernelFit fit;
  fit.implementation = "flash2";
  fit.table = "attention.csv";
  fit.rows = 18;
  fit.median_error = 0.028;
  fit.p90_error = 0.13;
  model.attention = fit;
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  const CostSource with = cost_sources(gpus(1, spec), Precision::kFp16, {.fused_attention = true}).at(0);
  EXPECT_NE(describe(with).find("; fused attention: flash2 fitted on attention.csv: 2.8% median, 13.0% p90 error over 18 rows"),
            std::string::npos)
      << describe(with);
  EXPECT_EQ(cost_sources_json({with}).at(0).at("fused_attention").at("rows"), 18);
}

// A run with pooling ops says, per device with a kernel model, how they are priced: the fitted
// window-read rate and its source, or as elementwise kernels when none was measured; a run
// without pooling, or a roofline device, says nothing of it.
TEST(CostProvenance, PoolingSaysWhereItsRateComesFrom) {
  DeviceSpec spec = fitted_gpu();
  KernelModel model = *spec.kernel_model;
  model.pooling_reads_per_second_per_sm = 3.2e9;
  model.pooling_source = "fitted on the pooling rows of pools.csv (today)";
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  const CostSource fitted = cost_sources(gpus(1, spec), Precision::kFp32, {.pooling = true}).at(0);
  EXPECT_NE(describe(fitted).find("; pooling: 3.2e+09 window reads/s per SM, fitted on the pooling rows of pools.csv (today)"),
            std::string::npos)
      << describe(fitted);
  EXPECT_EQ(cost_sources_json({fitted}).at(0).at("pooling").at("reads_per_second_per_sm"), 3.2e9);
  const CostSource unfitted = cost_sources(gpus(1, fitted_gpu()), Precision::kFp32, {.pooling = true}).at(0);
  EXPECT_NE(describe(unfitted).find("; pooling: as elementwise kernels, an estimate (no pooling kernel measured)"),
            std::string::npos)
      << describe(unfitted);
  const CostSource without = cost_sources(gpus(1, spec), Precision::kFp32).at(0);
  EXPECT_EQ(describe(without).find("pooling"), std::string::npos) << describe(without);
  EXPECT_FALSE(cost_sources_json({without}).at(0).contains("pooling"));
  EXPECT_EQ(describe(cost_sources(gpus(1, round_gpu()), Precision::kFp32, {.pooling = true}).at(0)).find("pooling"),
            std::string::npos);
}

}  // namespace
}  // namespace placesim
