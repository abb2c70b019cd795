// Transformer Engine's userbuffers overlap of sequence parallelism's collectives with the GEMMs
// (ParallelismOptions::tensor_comm_overlap, "tp_comm_overlap"): what the plan emits for one
// layer, how the analytical tier schedules it, and the scenarios it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/analytical/analytical_engine.h"
#include "sim/core/input_error.h"
#include "sim/session/pipeline.h"
#include "tests/support/scenario_text.h"

namespace placesim {
namespace tensor_comm_overlap_test {  // a unity batch holds several test files
namespace {

// A GPT of 2 layers (h = 1024, 16 heads, 512 tokens, vocabulary 4,096) on one DGX H100, tensor 4
// with sequence parallelism, one micro-batch of 2 samples, bf16: every layer activation is
// 2 x 512 x 1024 x 2 B = 2,097,152 B.
std::string gpt_text(bool overlap, bool sequence_parallel = true, const std::string& precision = "bf16") {
  return R"({"name": "tpo", "model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 1024, "heads": 16,
               "sequence": 512, "vocabulary": 4096}},
             "cluster": {"template": "dgx_h100"},
             "strategies": [{"name": "tp4", "parallelism": {"tensor": 4, "pipeline": 1, "data": 1, "framework": "megatron",
               "sequence_parallel": )" +
         std::string(sequence_parallel ? "true" : "false") + R"(, "tp_comm_overlap": )" + (overlap ? "true" : "false") +
         R"(}}],
             "run": {"mode": "training", "batch_size": 2, "precision": ")" + precision + R"(", "optimizer": "adam"}})";
}

constexpr double kActivationBytes = 2.0 * 512 * 1024 * 2;

struct PlanIndex {
  PlannedScenario planned;
  std::map<std::string, TaskId> id_of;
  const Task& task(const std::string& name) const { return planned.plan.tasks.at(id_of.at(name)); }
  bool has(const std::string& name) const { return id_of.count(name) > 0; }
  bool waits(const std::string& task_name, const std::string& for_name) const {
    const std::vector<TaskId>& deps = task(task_name).deps;
    return std::find(deps.begin(), deps.end(), id_of.at(for_name)) != deps.end();
  }
  const Transport& transport(const std::string& name) const {
    return planned.plan.transports.at(static_cast<size_t>(task(name).transport));
  }
};

PlanIndex plan_of(bool overlap, const std::string& precision = "bf16") {
  const Scenario scenario = testing::scenario_from_text(gpt_text(overlap, true, precision));
  PlanIndex index{plan_scenario(scenario), {}};
  for (const Task& task : index.planned.plan.tasks) index.id_of[task.name] = task.id;
  return index;
}

/// Each task's interval as the analytical tier schedules p's plan.
std::vector<TaskInterval> analytical_timeline(const PlanIndex& p, bool overlap) {
  const Scenario scenario = testing::scenario_from_text(gpt_text(overlap));
  return estimate_step(p.planned.plan, scenario.cluster_for(scenario.strategies.front())).timeline.tasks;
}

// Forward, per layer: the column GEMMs (qkv, mlp_fc) gather their sequence-sharded input
// themselves, beside the GEMM on the copy engines (TE's ring exchange: transport te_userbuffers,
// no share of the SMs), and what reads their output waits for the GEMM and the gather; the row
// GEMMs (attn_proj, mlp_proj) run on 132 - 16 of the H100's SMs and reduce-scatter in 4 chunks,
// three beside the GEMM and the last after it. No all-gather follows a reduce-scatter any more.
TEST(TensorCommOverlap, ForwardGathersBesideColumnGemmsAndPipelinesRowReduceScatters) {
  const PlanIndex p = plan_of(true);
  for (const std::string op : {"qkv", "mlp_fc"}) {
    const std::string gather = "mb0/sp-allgather/h.1/" + op;
    EXPECT_EQ(p.task(gather).collective, CollectiveKind::kAllGather);
    EXPECT_DOUBLE_EQ(p.task(gather).bytes, kActivationBytes) << op;
    EXPECT_EQ(p.transport(gather).id, "te_userbuffers");
    EXPECT_EQ(p.transport(gather).gpu_compute_share, 0.0);
    for (const std::string rank : {"/tp0", "/tp3"}) {
      EXPECT_FALSE(p.waits("mb0/fwd/h.1/" + op + rank, gather)) << op;
      // The gather starts when the GEMM may: it waits for what the GEMM waits for.
      for (TaskId dep : p.task("mb0/fwd/h.1/" + op + rank).deps) {
        const std::vector<TaskId>& deps = p.task(gather).deps;
        EXPECT_NE(std::find(deps.begin(), deps.end(), dep), deps.end()) << op;
      }
    }
  }
  EXPECT_TRUE(p.waits("mb0/fwd/h.1/gelu/tp0", "mb0/sp-allgather/h.1/mlp_fc"));
  EXPECT_TRUE(p.waits("mb0/fwd/h.1/gelu/tp0", "mb0/fwd/h.1/mlp_fc/tp0"));
  for (const std::string op : {"attn_proj", "mlp_proj"}) {
    EXPECT_DOUBLE_EQ(p.task("mb0/fwd/h.1/" + op + "/tp0").compute_scale, 132.0 / 116.0) << op;
    const std::string beside = "mb0/sp-reducescatter/userbuffers/h.1/" + op;
    const std::string exposed = "mb0/sp-reducescatter/h.1/" + op;
    EXPECT_DOUBLE_EQ(p.task(beside).bytes, kActivationBytes * 3 / 4) << op;
    EXPECT_DOUBLE_EQ(p.task(exposed).bytes, kActivationBytes / 4) << op;
    EXPECT_EQ(p.transport(beside).id, "te_userbuffers");
    EXPECT_FALSE(p.waits(beside, "mb0/fwd/h.1/" + op + "/tp0"));
    EXPECT_TRUE(p.waits(exposed, beside));
    EXPECT_TRUE(p.waits(exposed, "mb0/fwd/h.1/" + op + "/tp0"));
    EXPECT_FALSE(p.has("mb0/sp-allgather/h.1/" + op)) << op;
  }
  // Without the overlap: the row GEMMs on every SM, the whole reduce-scatter after them.
  const PlanIndex plain = plan_of(false);
  EXPECT_DOUBLE_EQ(plain.task("mb0/fwd/h.1/attn_proj/tp0").compute_scale, 1.0);
  EXPECT_DOUBLE_EQ(plain.task("mb0/sp-reducescatter/h.1/attn_proj").bytes, kActivationBytes);
  EXPECT_FALSE(plain.has("mb0/sp-allgather/h.1/qkv"));
}

// Backward: a row GEMM gathers its output gradient beside its backward (ring exchange), and the
// ops upstream wait for both; a column GEMM's input gradient is reduce-scattered beside its
// backward (TE's bulk overlap with the weight-gradient GEMM: NCCL's rate and share of the SMs),
// from when that backward may start, and nothing gathers it again until the row GEMM before.
TEST(TensorCommOverlap, BackwardGathersBesideRowGemmsAndReducesBesideColumnGemms) {
  const PlanIndex p = plan_of(true);
  for (const std::string op : {"attn_proj", "mlp_proj"}) {
    const std::string gather = "mb0/sp-allgather/grad/h.1/" + op;
    EXPECT_DOUBLE_EQ(p.task(gather).bytes, kActivationBytes) << op;
    EXPECT_EQ(p.transport(gather).id, "te_userbuffers");
    EXPECT_FALSE(p.waits("mb0/bwd/h.1/" + op + "/tp0", gather)) << op;
  }
  EXPECT_TRUE(p.waits("mb0/bwd/h.1/gelu/tp0", "mb0/sp-allgather/grad/h.1/mlp_proj"));
  EXPECT_TRUE(p.waits("mb0/bwd/h.1/gelu/tp0", "mb0/bwd/h.1/mlp_proj/tp0"));
  for (const std::string op : {"qkv", "mlp_fc"}) {
    const std::string scatter = "mb0/sp-reducescatter/grad/h.1/" + op;
    EXPECT_DOUBLE_EQ(p.task(scatter).bytes, kActivationBytes) << op;
    EXPECT_EQ(p.transport(scatter).id, "nccl");
    EXPECT_FALSE(p.waits(scatter, "mb0/bwd/h.1/" + op + "/tp0")) << op;
    EXPECT_FALSE(p.has("mb0/sp-allgather/grad/h.1/" + op)) << op;
  }
  EXPECT_TRUE(p.waits("mb0/bwd/h.1/ln_2/tp0", "mb0/sp-reducescatter/grad/h.1/mlp_fc"));
  EXPECT_TRUE(p.waits("mb0/bwd/h.1/ln_2/tp0", "mb0/bwd/h.1/mlp_fc/tp0"));
}

// The analytical tier runs a gather beside its GEMM: what reads the GEMM's output starts at the
// later of the two ends; the exposed reduce-scatter chunk starts at the later of the row GEMM's
// end and the other chunks' end.
TEST(TensorCommOverlap, ConsumersStartWhenBothTheGemmAndItsCollectiveAreDone) {
  const PlanIndex p = plan_of(true);
  const std::vector<TaskInterval> timeline = analytical_timeline(p, true);
  auto interval = [&](const std::string& name) { return timeline.at(p.id_of.at(name)); };
  const auto gemm = interval("mb0/fwd/h.1/mlp_fc/tp0"), gather = interval("mb0/sp-allgather/h.1/mlp_fc");
  EXPECT_GT(gemm.duration(), 0);
  EXPECT_GT(gather.duration(), 0);
  EXPECT_DOUBLE_EQ(interval("mb0/fwd/h.1/gelu/tp0").start_seconds, std::max(gemm.end_seconds, gather.end_seconds));
  const auto row = interval("mb0/fwd/h.1/mlp_proj/tp0"), beside = interval("mb0/sp-reducescatter/userbuffers/h.1/mlp_proj");
  EXPECT_DOUBLE_EQ(interval("mb0/sp-reducescatter/h.1/mlp_proj").start_seconds, std::max(row.end_seconds, beside.end_seconds));
  EXPECT_LT(beside.start_seconds, row.end_seconds);
}

// Without the userbuffers too, a column GEMM's input-gradient reduce-scatter runs beside its
// backward (Megatron-Core's asynchronous reduce-scatter beside the weight gradient): it starts
// once the backward has started and the re-gather is done, not when the backward ends; the
// all-gather back starts at the later of the backward's and the reduce-scatter's ends.
TEST(TensorCommOverlap, WithoutItTheInputGradientsReduceScatterStillRunsBesideTheWeightGradient) {
  const PlanIndex p = plan_of(false);
  const std::vector<TaskInterval> timeline = analytical_timeline(p, false);
  auto interval = [&](const std::string& name) { return timeline.at(p.id_of.at(name)); };
  for (const std::string op : {"qkv", "mlp_fc"}) {
    const auto backward = interval("mb0/bwd/h.1/" + op + "/tp0");
    const auto scatter = interval("mb0/sp-reducescatter/grad/h.1/" + op);
    const auto regather = interval("mb0/sp-allgather/grad-input/h.1/" + op);
    EXPECT_DOUBLE_EQ(scatter.start_seconds, std::max(backward.start_seconds, regather.end_seconds)) << op;
    EXPECT_DOUBLE_EQ(interval("mb0/sp-allgather/grad/h.1/" + op).start_seconds,
                     std::max(backward.end_seconds, scatter.end_seconds))
        << op;
    EXPECT_EQ(p.transport("mb0/sp-reducescatter/grad/h.1/" + op).id, "nccl");
  }
}

// The embedding and the output layer are not Transformer Engine modules: the output layer's
// input is gathered before it, the embedding's output gradient before its backward, as without
// the overlap; the embedding's reduce-scatter stays whole.
TEST(TensorCommOverlap, TheEmbeddingAndTheOutputLayerGatherBeforeThemselves) {
  const PlanIndex p = plan_of(true);
  std::string head;
  for (const auto& [name, id] : p.id_of) {
    if (name.rfind("mb0/sp-allgather/", 0) == 0 && name.find("/h.") == std::string::npos &&
        name.find("grad/") == std::string::npos) {
      head = name.substr(std::string("mb0/sp-allgather/").size());
    }
  }
  ASSERT_FALSE(head.empty());
  EXPECT_TRUE(p.waits("mb0/fwd/" + head + "/tp0", "mb0/sp-allgather/" + head)) << head;
  EXPECT_EQ(p.transport("mb0/sp-allgather/" + head).id, "nccl");
  EXPECT_TRUE(p.waits("mb0/bwd/embedding/wte/tp0", "mb0/sp-allgather/grad/embedding/wte"));
  EXPECT_DOUBLE_EQ(p.task("mb0/sp-reducescatter/embedding/wte").bytes, kActivationBytes);
  EXPECT_FALSE(p.has("mb0/sp-reducescatter/userbuffers/embedding/wte"));
}

// Under fp8 TE gathers its GEMMs' FP8 operands, 1 byte per element (forward inputs, backward output
// gradients); the output layer (bf16: its input, forward and again in backward) and the
// embedding gather bf16, 2 bytes.
TEST(TensorCommOverlap, UnderFp8TransformerEngineGathersFp8AndTheRestBf16) {
  const PlanIndex p = plan_of(true, "fp8");
  for (const std::string name : {"mb0/sp-allgather/h.1/qkv", "mb0/sp-allgather/h.1/mlp_fc",
                                 "mb0/sp-allgather/grad/h.1/attn_proj", "mb0/sp-allgather/grad/h.1/mlp_proj"}) {
    EXPECT_DOUBLE_EQ(p.task(name).bytes, kActivationBytes / 2) << name;
  }
  EXPECT_DOUBLE_EQ(p.task("mb0/sp-allgather/grad/embedding/wte").bytes, kActivationBytes);
  int head_gathers = 0;
  for (const auto& [name, id] : p.id_of) {
    if (name.rfind("mb0/sp-allgather/", 0) != 0 || name.find("/h.") != std::string::npos ||
        name.find("grad/") != std::string::npos) {
      continue;
    }
    EXPECT_DOUBLE_EQ(p.planned.plan.tasks[id].bytes, kActivationBytes) << name;
    ++head_gathers;
  }
  EXPECT_EQ(head_gathers, 2);  // the output layer's input, forward and re-gathered in backward
}

// Without the overlap each reduce-scatter's all-gather follows it at once, and what it gathers is
// the operand of the nearest GEMM: a TE linear layer's (FP8) but after the last layer, where it is
// the output layer's input (bf16), and before the first, where the input gradient goes to the
// embedding (bf16).
TEST(TensorCommOverlap, WithoutItUnderFp8AGatherMovesWhatTheGemmThatReadsItReads) {
  const PlanIndex p = plan_of(false, "fp8");
  for (const std::string name : {"mb0/sp-allgather/embedding/wte", "mb0/sp-allgather/h.0/attn_proj",
                                 "mb0/sp-allgather/h.0/mlp_proj", "mb0/sp-allgather/h.1/attn_proj",
                                 "mb0/sp-allgather/grad/h.0/mlp_fc", "mb0/sp-allgather/grad/h.1/qkv",
                                 "mb0/sp-allgather/grad/h.1/mlp_fc"}) {
    EXPECT_DOUBLE_EQ(p.task(name).bytes, kActivationBytes / 2) << name;
  }
  for (const std::string name : {"mb0/sp-allgather/h.1/mlp_proj", "mb0/sp-allgather/grad/h.0/qkv"}) {
    EXPECT_DOUBLE_EQ(p.task(name).bytes, kActivationBytes) << name;
  }
  const PlanIndex bf16 = plan_of(false);
  for (const std::string name : {"mb0/sp-allgather/h.0/mlp_proj", "mb0/sp-allgather/grad/h.1/qkv"}) {
    EXPECT_DOUBLE_EQ(bf16.task(name).bytes, kActivationBytes) << name;
  }
}

// Megatron-LM's --tp-comm-overlap needs sequence parallelism; mixture-of-experts layers are not
// modelled under it.
TEST(TensorCommOverlap, RefusesScenariosItDoesNotModel) {
  try {
    testing::scenario_from_text(gpt_text(true, /*sequence_parallel=*/false));
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/parallelism/tp_comm_overlap"), std::string::npos) << message;
    EXPECT_NE(message.find("\"sequence_parallel\": true"), std::string::npos) << message;
  }
  const Scenario moe = testing::scenario_from_text(testing::small_parallel_scenario(
      R"({"zoo": "mixtral_8x7b", "parameters": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "ffn": 128,
          "experts": 4, "top_k": 2, "sequence": 32, "vocabulary": 128}})",
      R"({"tensor": 2, "sequence_parallel": true, "tp_comm_overlap": true})", 1, "{}"));
  try {
    plan_scenario(moe);  // the graph's experts are known once it is built
    FAIL() << "planned";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/parallelism/tp_comm_overlap"), std::string::npos) << message;
    EXPECT_NE(message.find("experts"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tensor_comm_overlap_test
}  // namespace placesim
