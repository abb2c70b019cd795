// Fused attention (FlashAttention; docs/cost-model.md, "Fused attention"): its FLOPs as
// FlashAttention counts them, its time as the GEMM model's time for the kernel's work divided by
// the device's fitted efficiency, the fit itself on a table of known efficiencies, and the split
// of the kernel over tensor ranks (heads) and context ranks (queries).
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "sim/calibration/attention_calibration.h"
#include "sim/calibration/kernel_table.h"
#include "sim/cost/gemm_model.h"
#include "sim/cost/kernel_cost.h"
#include "sim/graph/model_flops.h"
#include "sim/planner/context_parallel.h"
#include "sim/planner/tensor_parallel.h"
#include "models/layer_builder.h"
#include "models/zoo.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace fused_attention_test {  // a unity batch holds several test files
namespace {

constexpr double kPeak = 100e12;
constexpr double kBandwidth = 2e12;

KernelModel test_model() {
  KernelModel model;
  model.sm_count = 100;
  model.gemm_efficiency[Precision::kFp32] = 0.8;
  model.gemm_efficiency[Precision::kBf16] = 0.8;
  model.tile_overhead_k = 32;
  model.small_tile_exponent = 0.5;
  model.kernel_overhead_seconds = 0;
  model.memory_efficiency = 0.8;
  model.fit.table = "test";
  return model;
}

/// The round test GPU at 100 TFLOP/s in fp32 and bf16, with `model`.
DeviceSpec test_spec(const KernelModel& model) {
  DeviceSpec spec = testing::round_gpu(kPeak, kBandwidth);
  spec.peak_flops_per_second[Precision::kBf16] = kPeak;
  spec.sm_count = model.sm_count;
  spec.kernel_model = std::make_shared<const KernelModel>(model);
  return spec;
}

AttentionShape attention_of(int64_t batch, int64_t sequence, int64_t head_dim, bool causal) {
  AttentionShape a;
  a.batch = batch, a.queries = sequence, a.keys = sequence, a.head_dim = head_dim, a.causal = causal;
  return a;
}

double gemm_seconds(int64_t batch, int64_t m, int64_t n, int64_t k, const DeviceSpec& spec) {
  GemmShape gemm;
  gemm.batch = batch, gemm.m = m, gemm.n = n, gemm.k = k;
  GemmDevice device{spec.peak_for(Precision::kBf16), spec.memory_bandwidth_bytes_per_second, spec.kernel_model.get()};
  return estimate_gemm(gemm, 2, Precision::kBf16, device).seconds;
}

// FlashAttention's count: forward 4 x batch x S^2 x d, half with a causal mask; backward 2.5x.
// 16 heads x 2 samples, S = 1024, d = 64: 4 x 32 x 1024^2 x 64 = 8,589,934,592 FLOPs.
TEST(FusedAttention, FlopsAsFlashAttentionCountsThem) {
  EXPECT_DOUBLE_EQ(attention_of(32, 1024, 64, false).forward_flops(), 8589934592.0);
  EXPECT_DOUBLE_EQ(attention_of(32, 1024, 64, true).forward_flops(), 4294967296.0);
  EXPECT_DOUBLE_EQ(attention_of(32, 1024, 64, true).backward_flops(), 2.5 * 4294967296.0);
}

// Forward: Q K^T [32][1024 x 1024 x 64] and P V [32][1024 x 64 x 1024]; a causal mask halves
// the keys: [32][1024 x 512 x 64] and [32][1024 x 64 x 512]. Backward: the scores twice (S, dP),
// P V's shape once (dQ) and the keys' side twice (dV, dK: [32][512 x 64 x 1024]).
TEST(FusedAttention, TimeIsTheGemmModelsForItsWorkOverTheFittedEfficiency) {
  KernelModel model = test_model();
  const DeviceSpec unfitted = test_spec(model);
  const AttentionShape causal = attention_of(32, 1024, 64, true);
  const double forward = gemm_seconds(32, 1024, 512, 64, unfitted) + gemm_seconds(32, 1024, 64, 512, unfitted);
  const double backward = 2 * gemm_seconds(32, 1024, 512, 64, unfitted) + gemm_seconds(32, 1024, 64, 512, unfitted) +
                          2 * gemm_seconds(32, 512, 64, 1024, unfitted);
  EXPECT_DOUBLE_EQ(attention_gemm_seconds(causal, true, Precision::kBf16, unfitted), forward);
  EXPECT_DOUBLE_EQ(attention_gemm_seconds(causal, false, Precision::kBf16, unfitted), backward);

  AttentionKernelFit fit;
  fit.forward_efficiency = 0.5;
  fit.backward_efficiency = 0.8;
  fit.table = "test";
  model.attention = fit;
  const DeviceSpec spec = test_spec(model);
  Task task;
  task.kernel = std::make_shared<const KernelShape>(KernelShape::of_attention(causal));
  task.kernel_passes = kForwardPass;
  task.kernel_samples = 1;
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kBf16, spec), forward / 0.5);
  task.kernel_passes = kBackwardPasses;  // one fused backward kernel, not one per pass
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kBf16, spec), backward / 0.8);
  task.kernel_passes = kBackwardPasses | kForwardPass;  // recomputation adds the forward again
  EXPECT_DOUBLE_EQ(kernel_model_seconds(task, Precision::kBf16, spec), forward / 0.5 + backward / 0.8);
}

// A table made from the H100's GEMM model at known efficiencies (forward 0.6, backward 0.75), timed
// in bursts as kernel tables are, gives them back and predicts its rows exactly; the rows of another
// implementation are left out with a count.
TEST(FusedAttention, FitRecoversTheEfficienciesOfASyntheticTable) {
  const HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  const DeviceSpec& spec = catalog.device("h100-sxm5-80gb", JsonReader(Json::object(), "test"));
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("placesim_attention_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path table = dir / "attention.csv";
  {
    std::ofstream csv(table);
    csv << "device,op,shape,precision,algorithm,seconds,source\n";
    for (int64_t sequence : {512, 2048, 8192}) {
      for (bool causal : {false, true}) {
        const AttentionShape a = attention_of(2 * 16, sequence, 128, causal);
        const std::string shape = "batch=2;heads=16;seq=" + std::to_string(sequence) + ";head_dim=128;causal=" +
                                  std::to_string(causal);
        csv << "h100-sxm5-80gb,attention_fwd," << shape << ",bf16,flash2,"
            << attention_gemm_seconds(a, true, Precision::kBf16, spec, KernelLoad::kBurst) / 0.6 << ",synthetic\n";
        if (!causal) {
          csv << "h100-sxm5-80gb,attention_bwd," << shape << ",bf16,flash2,"
              << attention_gemm_seconds(a, false, Precision::kBf16, spec, KernelLoad::kBurst) / 0.75 << ",synthetic\n";
        }
        csv << "h100-sxm5-80gb,attention_fwd," << shape << ",bf16,cudnn,1e-3,synthetic\n";
      }
    }
    csv << "h100-sxm5-80gb,gemm,m=128;n=128;k=128,bf16,cublas,1e-5,synthetic\n";
  }
  const AttentionCalibration calibration =
      calibrate_attention_from_kernel_tables({table}, "h100-sxm5-80gb", "flash2", catalog, "2026-12-03");
  EXPECT_NEAR(calibration.fit.forward_efficiency, 0.6, 1e-5);
  EXPECT_NEAR(calibration.fit.backward_efficiency, 0.75, 1e-5);
  EXPECT_EQ(calibration.fit.rows, 9);
  EXPECT_LT(calibration.fit.p90_error, 1e-5);
  EXPECT_EQ(calibration.skipped.at("cudnn: not the implementation fitted"), 6);
  EXPECT_EQ(calibration.skipped.at("gemm: not a fused attention kernel"), 1);
  // The GEMM fit's reader leaves the attention rows to this one.
  EXPECT_EQ(read_kernel_table(table).rows.size(), 1u);
  std::filesystem::remove_all(dir);
}

// The zoo's GPT with "attention": "fused": one FlashAttention op per layer in place of scores,
// softmax and context; its FLOPs are causal (half the unfused scores + context), the model FLOPs
// (PaLM's 6N + 12 L H Q T) the same as unfused, and no op writes the [S, S] scores.
TEST(FusedAttention, GptWithFusedAttention) {
  const Scenario fused = testing::scenario_from_text(R"({"model": {"zoo": "gpt", "parameters": {"layers": 2,
      "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128, "attention": "fused"}},
      "cluster": {"template": "dgx_a100", "nodes": 1}, "strategy": {"parallelism": {"tensor": 2}},
      "run": {"batch_size": 4, "precision": "bf16"}})");
  const Scenario unfused = testing::scenario_from_text(R"({"model": {"zoo": "gpt", "parameters": {"layers": 2,
      "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": 128}},
      "cluster": {"template": "dgx_a100", "nodes": 1}, "strategy": {"parallelism": {"tensor": 2}},
      "run": {"batch_size": 4, "precision": "bf16"}})");
  const OpGraph& graph = fused.graph;
  const OpId attention = graph.find("h.0/flash_attention");
  ASSERT_LT(attention, graph.size());
  EXPECT_GE(graph.find("h.0/softmax"), graph.size());
  // 4 samples x 8 heads, S = 32, d = 8: 4 x 32 x 32^2 x 8 / 2 = 524,288 FLOPs forward.
  EXPECT_DOUBLE_EQ(graph.op(attention).forward_flops, 524288);
  EXPECT_DOUBLE_EQ(graph.op(attention).forward_flops * 2,
                   unfused.graph.op(unfused.graph.find("h.0/scores")).forward_flops +
                       unfused.graph.op(unfused.graph.find("h.0/context")).forward_flops);
  EXPECT_EQ(attention_heads(graph.op(attention)), 8);
  EXPECT_DOUBLE_EQ(model_flops(graph, 4, true, Recomputation::kNone).model_flops_per_sample,
                   model_flops(unfused.graph, 4, true, Recomputation::kNone).model_flops_per_sample);
  // Split over 2 tensor ranks by heads; over 2 context ranks by queries, the keys whole; it reads
  // Q, K and V: K and V (2 x 4 x 32 x 64 x 2 bytes = 32,768) are what a context group gathers.
  const std::vector<TensorRole> roles =
      tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
  EXPECT_EQ(roles[attention], TensorRole::kSplit);
  const Op by_heads = tensor_parallel_shard(graph.op(attention), roles[attention], 2);
  EXPECT_EQ(by_heads.kernel->attention.batch, 16);
  const Op by_queries = context_parallel_shard(by_heads, 2);
  EXPECT_EQ(by_queries.kernel->attention.queries, 16);
  EXPECT_EQ(by_queries.kernel->attention.keys, 32);
  EXPECT_DOUBLE_EQ(by_queries.forward_flops, 524288.0 / 4);
  EXPECT_DOUBLE_EQ(attention_key_value_bytes(graph, attention), 32768);
}

}  // namespace
}  // namespace fused_attention_test
}  // namespace placesim
