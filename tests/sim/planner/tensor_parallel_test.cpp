// Tensor parallelism in the Megatron style (Shoeybi et al. 2019) and its 3D composition, against
// hand-derived numbers: a layer's time is its split compute plus four ring all-reduces of the
// b x s x h activation (2 forward, 2 backward); activation memory follows Korthikanti et al.
// 2022; mixed-precision Adam holds 16 bytes per parameter, of which each rank holds its shard.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/analytical/analytical_engine.h"
#include "sim/session/pipeline.h"
#include "models/zoo.h"
#include "sim/core/glob.h"
#include "sim/core/input_error.h"
#include "sim/spec/spec_error.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/tensor_parallel.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace tensor_parallel_test {  // a unity batch holds several test files
namespace {

constexpr double kPeak = 1e12;        // FLOP/s
constexpr double kBandwidth = 1e10;   // B, bytes/s per link direction
constexpr double kLatency = 5e-6;     // a, seconds per hop
constexpr double kGemmFlops = 1e10;   // F: forward FLOPs of each GEMM of the layer (whole batch)
constexpr double kNormFlops = 1e9;    // forward (= backward) FLOPs of the layer norm
constexpr double kActivation = 8e6;   // X: bytes of the b x s x h activation

// t GPUs in a ring (i <-> i+1), as collective_test.cpp: a ring all-reduce of S bytes takes
// 2(t-1)/t S/B + 2(t-1) a; from 3 GPUs NCCL's channels run the cycle both ways, half the buffer
// each: 2(t-1)/t S/(2B) + 2(t-1) a.
Cluster ring_of_gpus(size_t t) {
  Cluster cluster = testing::gpus(t, testing::round_gpu(kPeak, /*bandwidth=*/1e15));
  if (t == 2) cluster.add_link(0, 1, testing::round_link(kBandwidth, kLatency));
  if (t > 2) {
    for (size_t i = 0; i < t; ++i) cluster.add_link(i, (i + 1) % t, testing::round_link(kBandwidth, kLatency));
  }
  return cluster;
}

// n GPUs on one switch (routes never pass through a GPU).
Cluster switched_gpus(size_t n) {
  Cluster cluster = testing::gpus(n, testing::round_gpu(kPeak, /*bandwidth=*/1e15));
  VertexId hub = cluster.add_switch("switch");
  for (size_t i = 0; i < n; ++i) cluster.add_link(cluster.device(i).vertex, hub, testing::round_link(kBandwidth, kLatency));
  return cluster;
}

OpId add(OpGraph& graph, const std::string& name, const std::string& type, OpKind kind, double flops,
         double backward_flops, double output_bytes, std::optional<OpId> input) {
  Op op;
  op.name = name;
  op.type = type;
  op.kind = kind;
  op.forward_flops = flops;
  op.backward_flops = backward_flops;
  op.output_bytes = output_bytes;
  op.parameter_count = flops > 0 ? 10 : 0;  // few parameters: the updates take picoseconds
  OpId id = graph.add_op(op);
  if (input) graph.add_edge(*input, id, graph.op(*input).output_bytes);
  return id;
}

/// One transformer-like layer: ln -> attention block (qkv columns, attn_proj rows) -> MLP block
/// (mlp_fc columns, mlp_proj rows) -> loss. Every GEMM does F forward and 2F backward.
OpGraph layer_graph() {
  OpGraph graph;
  OpId x = add(graph, "input/x", "Placeholder", OpKind::kDataMovement, 0, 0, kActivation, std::nullopt);
  OpId ln = add(graph, "h.0/ln_1", "LayerNorm", OpKind::kNormalization, kNormFlops, kNormFlops, kActivation, x);
  OpId qkv = add(graph, "h.0/qkv", "MatMul", OpKind::kMatMul, kGemmFlops, 2 * kGemmFlops, 3 * kActivation, ln);
  OpId proj = add(graph, "h.0/attn_proj", "MatMul", OpKind::kMatMul, kGemmFlops, 2 * kGemmFlops, kActivation, qkv);
  OpId fc = add(graph, "h.0/mlp_fc", "MatMul", OpKind::kMatMul, kGemmFlops, 2 * kGemmFlops, 4 * kActivation, proj);
  OpId out = add(graph, "h.0/mlp_proj", "MatMul", OpKind::kMatMul, kGemmFlops, 2 * kGemmFlops, kActivation, fc);
  add(graph, "loss/xent", "Loss", OpKind::kReduction, 0, 0, 4, out);
  return graph;
}

ParallelismOptions tensor_parallel(size_t t) {
  ParallelismOptions options;
  options.tensor = static_cast<int64_t>(t);
  for (size_t i = 0; i < t; ++i) options.devices.push_back(i);
  options.column_parallel = default_column_parallel_ops();
  options.row_parallel = default_row_parallel_ops();
  options.algorithm = CollectiveAlgorithm::kRing;
  return options;
}

/// tensor x pipeline x data on the first tensor * pipeline * data GPUs, `micro_batches` per step.
ParallelismOptions parallel_3d(int64_t tensor, int64_t pipeline, int64_t data, int64_t micro_batches) {
  ParallelismOptions options = tensor_parallel(static_cast<size_t>(tensor * pipeline * data));
  options.tensor = tensor;
  options.pipeline = pipeline;
  options.data = data;
  options.micro_batches = micro_batches;
  return options;
}

double layer_step_seconds(size_t t) {
  Cluster cluster = ring_of_gpus(t);
  RunOptions run;
  run.batch_size = 8;
  ExecutionPlan plan = build_parallel_3d_plan(layer_graph(), cluster, run, tensor_parallel(t), "tp", nullptr);
  return simulate_plan(plan, cluster).metrics.step_time_seconds;
}

TEST(TensorParallel, SplitsTheGemmsBetweenAColumnAndARowOpAndReplicatesTheRest) {
  OpGraph graph = layer_graph();
  auto roles = tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
  EXPECT_EQ(roles[graph.find("h.0/ln_1")], TensorRole::kReplicated);
  EXPECT_EQ(roles[graph.find("h.0/qkv")], TensorRole::kColumn);
  EXPECT_EQ(roles[graph.find("h.0/attn_proj")], TensorRole::kRow);
  EXPECT_EQ(roles[graph.find("h.0/mlp_fc")], TensorRole::kColumn);
  EXPECT_EQ(roles[graph.find("h.0/mlp_proj")], TensorRole::kRow);
  EXPECT_EQ(roles[graph.find("loss/xent")], TensorRole::kReplicated);
}

// One layer on t ranks (layer norm replicated, four GEMMs split, loss free):
//   forward  = F_ln + 4 F/t + 2 AR(X)      (all-reduce after attn_proj and after mlp_proj)
//   backward = 4 x 2F/t + 2 AR(X) + F_ln   (all-reduce of the gradient into mlp_fc and into qkv)
//   AR(X)    = 2(t-1)/t X/(c B) + 2(t-1) a (ring; c = 2 channels, the cycle each way, from t = 3)
// so the step takes 2 F_ln + 12 F/t + 4 AR(X); with t = 1 there is no all-reduce.
TEST(TensorParallel, LayerTimeIsSplitComputePlusFourRingAllReducesOfTheActivation) {
  for (size_t t : {1u, 2u, 4u}) {
    const double td = static_cast<double>(t), channels = t >= 3 ? 2 : 1;
    const double allreduce =
        t == 1 ? 0 : 2 * (td - 1) / td * kActivation / (channels * kBandwidth) + 2 * (td - 1) * kLatency;
    const double expected = 2 * kNormFlops / kPeak + 12 * kGemmFlops / td / kPeak + 4 * allreduce;
    EXPECT_NEAR(layer_step_seconds(t), expected, expected * 1e-3) << t << " ranks";
  }
}

OpGraph small_gpt(bool dropout, int64_t batch, const std::string& vocabulary = "128", bool fused_dropout_add = false) {
  Json parameters = Json::parse(R"({"layers": 2, "hidden": 64, "heads": 8, "sequence": 32, "vocabulary": )" +
                                vocabulary + (dropout ? R"(, "dropout": true)" : "") +
                                (fused_dropout_add ? R"(, "bias_dropout_fusion": true})" : "}"));
  return build_zoo_model("gpt", JsonReader(parameters, "test"), batch, /*fp16=*/2);
}

/// The small GPT (batch b = 2) on 4 tensor ranks, fp16, with or without full recomputation.
ExecutionPlan tensor_4_gpt_plan(bool recompute) {
  OpGraph graph = small_gpt(false, 2);
  Cluster cluster = ring_of_gpus(4);
  RunOptions run;
  run.batch_size = 2;
  run.precision = Precision::kFp16;
  run.recompute = recompute;
  return build_parallel_3d_plan(graph, cluster, run, tensor_parallel(4), "gpt", nullptr);
}

/// Layer h.1's collectives in emission order, each checked to move the b x s x h fp16
/// activation (b = 2, s = 32, h = 64) over the 4 ranks.
std::vector<std::string> layer_one_collectives(const ExecutionPlan& plan) {
  std::vector<std::string> names;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.op.rfind("h.1/", 0) != 0) continue;
    names.push_back(task.name);
    EXPECT_DOUBLE_EQ(task.bytes, 2.0 * 32 * 64 * 2) << task.name;
    EXPECT_EQ(task.group.size(), 4u);
  }
  return names;
}

// Megatron: per transformer layer, forward all-reduces the outputs of attn_proj and mlp_proj,
// backward the input gradients of qkv and mlp_fc; each is the b x s x h activation (fp16).
TEST(TensorParallel, EveryGptLayerAllReducesTwiceForwardAndTwiceBackward) {
  const std::vector<std::string> layer_collectives = layer_one_collectives(tensor_4_gpt_plan(false));
  std::vector<std::string> expected = {"mb0/tp-allreduce/h.1/attn_proj", "mb0/tp-allreduce/h.1/mlp_proj",
                                       "mb0/tp-allreduce/grad/h.1/mlp_fc", "mb0/tp-allreduce/grad/h.1/qkv"};
  EXPECT_EQ(layer_collectives, expected);
}

// Full recomputation re-runs each layer's forward in backward, Megatron's g with it: the outputs
// of attn_proj and mlp_proj are all-reduced once more, each after its op's backward (which
// carries the recomputed forward) and before the ops upstream of it, so six all-reduces of the
// b x s x h activation per layer and micro-batch instead of four (Korthikanti et al. 2022,
// section 5: full recomputation repeats the forward's tensor-parallel communication).
TEST(TensorParallel, FullRecomputationAllReducesTheRowParallelOutputsAgainInBackward) {
  const ExecutionPlan plan = tensor_4_gpt_plan(true);
  const std::vector<std::string> layer_collectives = layer_one_collectives(plan);
  std::map<std::string, TaskId> id_of;
  for (const Task& task : plan.tasks) id_of[task.name] = task.id;
  std::vector<std::string> expected = {"mb0/tp-allreduce/h.1/attn_proj", "mb0/tp-allreduce/h.1/mlp_proj",
                                       "mb0/tp-allreduce/recompute/h.1/mlp_proj", "mb0/tp-allreduce/grad/h.1/mlp_fc",
                                       "mb0/tp-allreduce/recompute/h.1/attn_proj", "mb0/tp-allreduce/grad/h.1/qkv"};
  EXPECT_EQ(layer_collectives, expected);
  // After mlp_proj's backward on every rank; mlp_fc's backward waits for it.
  const Task& again = plan.tasks[id_of.at("mb0/tp-allreduce/recompute/h.1/mlp_proj")];
  for (const std::string rank : {"/tp0", "/tp1", "/tp2", "/tp3"}) {
    const auto backward = id_of.find("mb0/bwd/h.1/mlp_proj" + rank);
    ASSERT_NE(backward, id_of.end()) << rank;
    EXPECT_NE(std::find(again.deps.begin(), again.deps.end(), backward->second), again.deps.end()) << rank;
  }
  // The op upstream of mlp_proj (the MLP's activation) starts its backward after it, on every rank.
  std::vector<std::string> waiting;
  for (const Task& task : plan.tasks) {
    if (std::find(task.deps.begin(), task.deps.end(), again.id) != task.deps.end()) waiting.push_back(task.name);
  }
  EXPECT_EQ(waiting, (std::vector<std::string>{"mb0/bwd/h.1/gelu/tp0", "mb0/bwd/h.1/gelu/tp1", "mb0/bwd/h.1/gelu/tp2",
                                               "mb0/bwd/h.1/gelu/tp3"}));
  // Without recomputation the forward's all-reduces are not repeated (the test above: four).
}

/// The small GPT (batch 2) on 4 tensor-parallel ranks with sequence parallelism, in `precision`.
ExecutionPlan tensor_4_sequence_parallel_gpt_plan(Precision precision) {
  OpGraph graph = small_gpt(false, 2);
  Cluster cluster = ring_of_gpus(4);
  RunOptions run;
  run.batch_size = 2;
  run.precision = precision;
  ParallelismOptions options = tensor_parallel(4);
  options.sequence_parallel = true;
  return build_parallel_3d_plan(graph, cluster, run, options, "gpt", nullptr);
}

// Sequence parallelism keeps the input of qkv and mlp_fc sharded over the sequence, so each
// one's backward all-gathers it again for its weight gradient (Megatron-Core's
// LinearWithGradAccumulationAndAsyncCommunication.backward; Korthikanti et al. 2022, section
// 4.2.2): two more collectives per layer, each the whole b x s x h activation. The all-gather
// starts with the op's backward (it waits for what that backward waits for, not for it). Each of
// Megatron's all-reduces becomes a reduce-scatter and the all-gather back, of the same bytes:
// forward after attn_proj and mlp_proj, backward of the input gradients of mlp_fc and qkv. That
// backward reduce-scatter runs beside the weight-gradient GEMM (Megatron-Core issues it
// asynchronously after the data gradient: `_reduce_scatter_base(..., async_op=True)`): it waits
// for the re-gather and for what the op's backward waits for, not for the backward; the
// all-gather back waits for both.
TEST(TensorParallel, SequenceParallelismGathersEachColumnOpsInputAgainInBackward) {
  const ExecutionPlan plan = tensor_4_sequence_parallel_gpt_plan(Precision::kFp16);
  EXPECT_EQ(layer_one_collectives(plan),
            (std::vector<std::string>{"mb0/sp-reducescatter/h.1/attn_proj", "mb0/sp-allgather/h.1/attn_proj",
                                      "mb0/sp-reducescatter/h.1/mlp_proj", "mb0/sp-allgather/h.1/mlp_proj",
                                      "mb0/sp-allgather/grad-input/h.1/mlp_fc", "mb0/sp-reducescatter/grad/h.1/mlp_fc",
                                      "mb0/sp-allgather/grad/h.1/mlp_fc", "mb0/sp-allgather/grad-input/h.1/qkv",
                                      "mb0/sp-reducescatter/grad/h.1/qkv", "mb0/sp-allgather/grad/h.1/qkv"}));
  std::map<std::string, TaskId> id_of;
  for (const Task& task : plan.tasks) id_of[task.name] = task.id;
  for (const std::string name : {"h.1/attn_proj", "h.1/mlp_proj", "grad/h.1/mlp_fc", "grad/h.1/qkv"}) {
    const Task& scatter = plan.tasks[id_of.at("mb0/sp-reducescatter/" + name)];
    const Task& gather = plan.tasks[id_of.at("mb0/sp-allgather/" + name)];
    EXPECT_EQ(scatter.collective, CollectiveKind::kReduceScatter) << name;
    EXPECT_EQ(gather.collective, CollectiveKind::kAllGather) << name;
    EXPECT_NE(std::find(gather.deps.begin(), gather.deps.end(), scatter.id), gather.deps.end()) << name;
    // Forward, the gather waits for the scatter alone; backward, for the op's backward too.
    EXPECT_EQ(gather.deps.size(), name.rfind("grad/", 0) == 0 ? 5u : 1u) << name;
  }
  for (const std::string op : {"attn_proj", "mlp_proj"}) {  // the next ops wait for the gather
    const TaskId gather = id_of.at("mb0/sp-allgather/h.1/" + op);
    const std::string next = op == "attn_proj" ? "add_1" : "add_2";
    const std::vector<TaskId>& deps = plan.tasks[id_of.at("mb0/fwd/h.1/" + next + "/tp0")].deps;
    EXPECT_NE(std::find(deps.begin(), deps.end(), gather), deps.end()) << op;
  }
  for (const std::string op : {"mlp_fc", "qkv"}) {
    const Task& regather = plan.tasks[id_of.at("mb0/sp-allgather/grad-input/h.1/" + op)];
    EXPECT_EQ(regather.collective, CollectiveKind::kAllGather);
    const Task& reduce = plan.tasks[id_of.at("mb0/sp-reducescatter/grad/h.1/" + op)];
    EXPECT_NE(std::find(reduce.deps.begin(), reduce.deps.end(), regather.id), reduce.deps.end()) << op;
    for (const std::string rank : {"/tp0", "/tp1", "/tp2", "/tp3"}) {
      const TaskId backward = id_of.at("mb0/bwd/h.1/" + op + rank);
      EXPECT_EQ(std::find(reduce.deps.begin(), reduce.deps.end(), backward), reduce.deps.end()) << op << rank;
      EXPECT_EQ(std::find(regather.deps.begin(), regather.deps.end(), backward), regather.deps.end()) << op << rank;
      const Task& gather_back = plan.tasks[id_of.at("mb0/sp-allgather/grad/h.1/" + op)];
      EXPECT_NE(std::find(gather_back.deps.begin(), gather_back.deps.end(), backward), gather_back.deps.end()) << op;
      for (TaskId dep : plan.tasks[backward].deps) {
        EXPECT_NE(std::find(regather.deps.begin(), regather.deps.end(), dep), regather.deps.end()) << op << rank;
        EXPECT_NE(std::find(reduce.deps.begin(), reduce.deps.end(), dep), reduce.deps.end()) << op << rank;
      }
    }
  }
  // Without sequence parallelism there is nothing to gather again (the tests above: four).
}

// Under fp8 Transformer Engine gathers FP8 operands (LayerNormLinear's FP8 norm output, a
// row-parallel layer's output gradient cast before its gather): a sequence-parallel all-gather
// that a TE GEMM reads moves 1 byte per element, 2 x 32 x 64 = 4,096 bytes, half the
// reduce-scatters' 8,192 bf16 bytes, which stay as they are. The last layer's (h.1) gather after
// its MLP feeds the output layer, which is not TE's: bf16, 8,192 bytes.
TEST(TensorParallel, UnderFp8SequenceParallelAllGathersMoveOneBytePerElement) {
  const ExecutionPlan plan = tensor_4_sequence_parallel_gpt_plan(Precision::kFp8);
  int gathers = 0, scatters = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.op.rfind("h.1/", 0) != 0) continue;
    if (task.collective == CollectiveKind::kAllGather) {
      const double element_bytes = task.name == "mb0/sp-allgather/h.1/mlp_proj" ? 2 : 1;
      EXPECT_DOUBLE_EQ(task.bytes, 2.0 * 32 * 64 * element_bytes) << task.name;
      ++gathers;
    } else {
      EXPECT_DOUBLE_EQ(task.bytes, 2.0 * 32 * 64 * 2) << task.name;
      ++scatters;
    }
  }
  EXPECT_EQ(gathers, 6);  // two after the forward reduce-scatters, two re-gathers, two after the backward ones
  EXPECT_EQ(scatters, 4);
}

// What the reduce-scatter and all-gather cost in place of the all-reduce: on a DGX H100 the
// 8-GPU all-reduce is NCCL's NVLS one (hardware_profiles/collectives/azure_nd-h100-v5.csv:
// 268,435,456 B in 1109.55 us, 423 GB/s of bus bandwidth), while its all-gather and
// reduce-scatter are OpenXLA's measured 729.28 and 771.104 us at that size
// (xla_h100-sxm5-nvswitch-8gpu.csv). A 1 x 8192 x 16384 bf16 activation is 268,435,456 B, so
// each of sequence parallelism's reductions takes 1500.384 us, where an all-reduce took 1109.55.
TEST(TensorParallel, SequenceParallelReductionsTakeTheReduceScatterAndAllGatherCurves) {
  auto scenario_text = [](bool sequence_parallel) {
    return R"({"name": "sp", "model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 16384, "heads": 128,
                 "sequence": 8192, "vocabulary": 32768}},
               "cluster": {"template": "dgx_h100"},
               "strategies": [{"name": "tp8", "parallelism": {"tensor": 8, "pipeline": 1, "data": 1,
                 "sequence_parallel": )" + std::string(sequence_parallel ? "true" : "false") + R"(}}],
               "run": {"mode": "training", "batch_size": 1, "precision": "bf16", "optimizer": "adam"}})";
  };
  for (const bool sequence_parallel : {false, true}) {
    SCOPED_TRACE(sequence_parallel ? "sequence parallel" : "all-reduce");
    const Scenario scenario = testing::scenario_from_text(scenario_text(sequence_parallel));
    const Cluster& cluster = scenario.cluster_for(scenario.strategies.front());
    const PlannedScenario planned = plan_scenario(scenario);
    std::map<std::string, double> seconds;
    for (const Task& task : planned.plan.tasks) {
      if (task.kind == TaskKind::kCollective && task.op == "h.1/attn_proj") {
        EXPECT_DOUBLE_EQ(task.bytes, 268435456.0) << task.name;
        seconds[task.name] = analytical_collective_seconds(task, cluster);
      }
    }
    if (!sequence_parallel) {
      EXPECT_EQ(seconds.size(), 1u);
      EXPECT_NEAR(seconds["mb0/tp-allreduce/h.1/attn_proj"], 1109.55e-6, 0.01e-6);
      continue;
    }
    EXPECT_EQ(seconds.size(), 2u);
    EXPECT_NEAR(seconds["mb0/sp-reducescatter/h.1/attn_proj"], 771.104e-6, 0.001e-6);
    EXPECT_NEAR(seconds["mb0/sp-allgather/h.1/attn_proj"], 729.28e-6, 0.001e-6);
  }
}

// An encoder-decoder's cross-attention splits like self-attention (Megatron's T5: Q and K/V
// projections by columns, the output projection by rows), and the decoder's lookup in the shared
// embedding is vocabulary-parallel: each decoder layer all-reduces three activations in forward
// (after attn_proj, cross_proj and mlp_proj).
TEST(TensorParallel, EncoderDecoderCrossAttentionSplitsLikeSelfAttention) {
  const Json parameters = {{"layers", 2}, {"hidden", 64}, {"heads", 8}, {"ffn", 128}, {"vocabulary", 128},
                           {"source_sequence", 16}, {"target_sequence", 8}};
  OpGraph graph = build_zoo_model("transformer_base", JsonReader(parameters, "test"), 2, /*fp16=*/2);
  auto roles = tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
  EXPECT_EQ(roles[graph.find("dec.1/cross_q")], TensorRole::kColumn);
  EXPECT_EQ(roles[graph.find("dec.1/cross_k")], TensorRole::kColumn);
  EXPECT_EQ(roles[graph.find("dec.1/cross_v")], TensorRole::kColumn);
  EXPECT_EQ(roles[graph.find("dec.1/cross_scores")], TensorRole::kSplit);
  EXPECT_EQ(roles[graph.find("dec.1/cross_context")], TensorRole::kSplit);
  EXPECT_EQ(roles[graph.find("dec.1/cross_proj")], TensorRole::kRow);
  EXPECT_EQ(roles[graph.find("dec.1/ln_2")], TensorRole::kReplicated);
  EXPECT_EQ(roles[graph.find("decoder_embedding/wte")], TensorRole::kRow);

  Cluster cluster = ring_of_gpus(4);
  RunOptions run;
  run.batch_size = 2;
  run.precision = Precision::kFp16;
  ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, tensor_parallel(4), "transformer", nullptr);
  std::vector<std::string> forward_allreduces;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCollective && task.op.rfind("dec.1/", 0) == 0 &&
        task.name.find("/grad/") == std::string::npos) {
      forward_allreduces.push_back(task.name);
    }
  }
  EXPECT_EQ(forward_allreduces, (std::vector<std::string>{"mb0/tp-allreduce/dec.1/attn_proj",
                                                          "mb0/tp-allreduce/dec.1/cross_proj",
                                                          "mb0/tp-allreduce/dec.1/mlp_proj"}));
}

TEST(TensorParallel, RejectsAGroupThatDoesNotDivideTheHeads) {
  OpGraph graph = small_gpt(false, 2);
  Cluster cluster = ring_of_gpus(3);
  RunOptions run;
  ParallelismOptions options = tensor_parallel(3);
  try {
    build_parallel_3d_plan(graph, cluster, run, options, "gpt", nullptr);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.option(), "parallelism/tensor");
    EXPECT_NE(std::string(error.what()).find("8 attention heads"), std::string::npos) << error.what();
  }
}

// Korthikanti et al. 2022, section 4.1 (fp16, with Megatron's dropouts, no sequence parallelism):
// one transformer layer keeps s b h (34 + 5 a s / h) bytes for its backward on one device and
// s b h (10 + 24/t + 5 a s / (h t)) on each of t tensor-parallel ranks; the same with each hidden
// dropout fused with its residual add (Megatron's bias_dropout_add: it keeps the dropout's mask,
// s b h bytes, as the separate dropout does, and the add nothing).
TEST(TensorParallel, ActivationsSavedPerLayerMatchKorthikanti) {
  const double b = 2, s = 32, h = 64, a = 8;
  for (bool fused : {false, true}) {
  OpGraph graph = small_gpt(true, 2, "128", fused);
  for (int64_t t : {1, 2, 4, 8}) {
    const double td = static_cast<double>(t);
    auto roles = tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
    double layer_bytes = 0;
    for (OpId v = 0; v < graph.size(); ++v) {
      if (graph.op(v).layer == "h.1") layer_bytes += saved_activation_bytes(graph, roles, t, v);
    }
    const double expected = t == 1 ? s * b * h * (34 + 5 * a * s / h) : s * b * h * (10 + 24 / td + 5 * a * s / (h * td));
    EXPECT_DOUBLE_EQ(layer_bytes, expected) << t << " ranks" << (fused ? ", fused dropout-adds" : "");
  }
  }
}

// With sequence parallelism the layer norms, dropouts and residual adds work on 1/t of the
// sequence too: s b h (34 + 5 a s / h) / t per layer on each rank (Korthikanti et al. 2022,
// section 4.2.2, equation 4 without recomputation); their parameters stay whole.
TEST(TensorParallel, SequenceParallelismDividesEveryLayersActivationsByT) {
  const double b = 2, s = 32, h = 64, a = 8;
  OpGraph graph = small_gpt(true, 2);
  for (int64_t t : {2, 4, 8}) {
    auto roles = tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
    use_sequence_parallelism(&roles);
    double layer_bytes = 0;
    int summed = 0;
    for (OpId v = 0; v < graph.size(); ++v) {
      if (graph.op(v).layer != "h.1") continue;
      layer_bytes += saved_activation_bytes(graph, roles, t, v);
      const Op& op = graph.op(v);
      const Op shard = tensor_parallel_shard(op, roles[v], t);
      if (op.kind == OpKind::kNormalization) {
        EXPECT_EQ(shard.parameter_count, op.parameter_count) << op.name << ": layer norm weights stay whole";
        EXPECT_DOUBLE_EQ(shard.forward_flops, op.forward_flops / static_cast<double>(t)) << op.name;
      }
      // The residual stream's gradient sums are on 1/t of the sequence too, still part of the
      // shard's backward bytes.
      if (op.gradient_sum_bytes > 0) {
        ++summed;
        EXPECT_DOUBLE_EQ(shard.gradient_sum_bytes, op.gradient_sum_bytes / static_cast<double>(t)) << op.name;
        EXPECT_LE(shard.gradient_sum_bytes, shard.backward_bytes) << op.name;
      }
    }
    EXPECT_GT(summed, 0) << "the residual stream forks in every layer";
    EXPECT_DOUBLE_EQ(layer_bytes, s * b * h * (34 + 5 * a * s / h) / static_cast<double>(t)) << t << " ranks";
  }
}

// Selective recomputation re-runs the core attention (Q K^T, softmax, its dropout, the product
// with V) in backward and keeps none of what it makes: the 5 a s / h term goes, leaving
// s b h (10 + 24/t) per layer, or s b h 34 / t with sequence parallelism (Korthikanti et al.
// 2022, table 2). The backward of each of those ops carries its forward's FLOPs too.
TEST(TensorParallel, SelectiveRecomputationDropsTheAttentionTerm) {
  const double b = 2, s = 32, h = 64;
  OpGraph graph = small_gpt(true, 2);
  std::vector<bool> recomputed(graph.size(), false);
  size_t core = 0;
  for (OpId v = 0; v < graph.size(); ++v) {
    for (const auto& pattern : default_selective_recompute_ops()) recomputed[v] = recomputed[v] || glob_match(pattern, graph.op(v).name);
    core += recomputed[v] && graph.op(v).layer == "h.1";
  }
  EXPECT_EQ(core, 4u) << "scores, softmax, attn_dropout, context";
  for (int64_t t : {1, 2, 4, 8}) {
    const double td = static_cast<double>(t);
    for (bool sequence : {false, true}) {
      auto roles = tensor_parallel_roles(graph, default_column_parallel_ops(), default_row_parallel_ops());
      if (sequence) use_sequence_parallelism(&roles);
      double layer_bytes = 0;
      for (OpId v = 0; v < graph.size(); ++v) {
        if (graph.op(v).layer == "h.1") layer_bytes += saved_activation_bytes(graph, roles, t, v, &recomputed);
      }
      const double expected = sequence ? s * b * h * 34 / td : s * b * h * (10 + 24 / td);
      EXPECT_DOUBLE_EQ(layer_bytes, expected) << t << " ranks" << (sequence ? ", sequence parallel" : "");
    }
  }
  // In the plan: every backward task of a core op does its forward's FLOPs more.
  Cluster cluster = ring_of_gpus(2);
  RunOptions run;
  run.batch_size = 2;
  run.precision = Precision::kFp16;
  ParallelismOptions plain = tensor_parallel(2), selective = tensor_parallel(2);
  selective.selective_recompute = default_selective_recompute_ops();
  auto backward_flops = [&](const ExecutionPlan& plan) {
    double flops = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCompute && task.phase == Phase::kBackward && task.device == 0) flops += task.flops;
    }
    return flops;
  };
  double core_forward_flops = 0;
  for (OpId v = 0; v < graph.size(); ++v) {
    if (recomputed[v]) core_forward_flops += graph.op(v).forward_flops / 2;  // all of them split over 2 ranks
  }
  const double more = backward_flops(build_parallel_3d_plan(graph, cluster, run, selective, "selective", nullptr)) -
                      backward_flops(build_parallel_3d_plan(graph, cluster, run, plain, "plain", nullptr));
  EXPECT_NEAR(more, core_forward_flops, 1e-9 * core_forward_flops);
  EXPECT_GT(core_forward_flops, 0);
}

// The plan holds exactly that: rank 0's forward tasks of layer h.1 allocate the layer's saved
// activations (freed by their backward).
TEST(TensorParallel, ForwardTasksOfALayerAllocateKorthikantisActivations) {
  const double b = 2, s = 32, h = 64, a = 8, t = 4;
  OpGraph graph = small_gpt(true, 2);
  Cluster cluster = ring_of_gpus(4);
  RunOptions run;
  run.batch_size = 2;
  run.precision = Precision::kFp16;
  ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, tensor_parallel(4), "gpt", nullptr);
  double allocated = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind == TaskKind::kCompute && task.phase == Phase::kForward && task.device == 0 &&
        task.op.rfind("h.1/", 0) == 0) {
      allocated += task.output_bytes;
    }
  }
  EXPECT_DOUBLE_EQ(allocated, s * b * h * (10 + 24 / t + 5 * a * s / (h * t)));
}

// With recomputation a layer keeps only its checkpoint for the backward: the input of its first
// op, 2 s b h bytes in fp16 (Korthikanti et al. 2022, section 4.2.2), held by ln_1 from its
// forward to its backward, for every micro-batch. Every other forward buffer of the layer is
// freed once its consumers' forwards end (no keep_until).
TEST(TensorParallel, RecomputationKeepsOneLayerInputPerLayerAndMicroBatch) {
  const double b = 2, s = 32, h = 64;  // b: samples per micro-batch
  const int64_t micro_batches = 4;
  OpGraph graph = small_gpt(true, static_cast<int64_t>(b) * micro_batches);  // the graph's batch: the step's
  Cluster cluster = ring_of_gpus(2);
  RunOptions run;
  run.batch_size = static_cast<int64_t>(b) * micro_batches;
  run.precision = Precision::kFp16;
  run.recompute = true;
  ParallelismOptions options = tensor_parallel(2);
  options.micro_batches = micro_batches;
  ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, options, "gpt", nullptr);
  std::map<std::string, double> kept;  // by layer, on rank 0, over the micro-batches
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCompute || task.phase != Phase::kForward || task.device != 0) continue;
    const std::string layer = task.op.substr(0, task.op.find('/'));
    if (!task.keep_until.empty() && layer.rfind("h.", 0) == 0) kept[layer] += task.output_bytes;
  }
  ASSERT_EQ(kept.size(), 2u);
  for (const auto& [layer, bytes] : kept) EXPECT_DOUBLE_EQ(bytes, micro_batches * 2 * s * b * h) << layer;
}

/// The small GPT's parameters on each of t tensor ranks (L 2, hidden h 64, vocabulary V 128,
/// sequence S 32): per layer 12h^2 + 9h split (QKV, projections, MLP with biases) and 4h
/// replicated (two layer norms); the vocabulary-parallel embedding V h split; positions S h and
/// the final layer norm 2h replicated.
double small_gpt_parameters_per_rank(double t) {
  const double L = 2, h = 64, V = 128, S = 32;
  return L * ((12 * h * h + 9 * h) / t + 4 * h) + V * h / t + S * h + 2 * h;
}

// Mixed-precision Adam: fp16 weights 2 + fp16 gradients 2 + fp32 master 4 + momentum 4 +
// variance 4 = 16 bytes per parameter (ZeRO, Rajbhandari et al. 2020), each of t ranks holding
// small_gpt_parameters_per_rank(t). With run.fp32_gradients (Megatron-LM's bf16 runs accumulate
// and reduce their gradients in fp32) the gradients take 4 bytes: 2 + 4 + 12 = 18; an fp32 run's
// gradients are fp32 already.
TEST(TensorParallel, MixedPrecisionAdamHoldsSixteenBytesPerParameterShardEighteenWithFp32Gradients) {
  OpGraph graph = small_gpt(false, 2);
  RunOptions run;
  run.batch_size = 2;
  run.precision = Precision::kFp16;
  run.optimizer = Optimizer::kAdam;
  for (bool fp32_gradients : {false, true}) {
    run.fp32_gradients = fp32_gradients;
    const double gradient_element = fp32_gradients ? 4 : 2;
    EXPECT_DOUBLE_EQ(gradient_element_bytes(run, 2), gradient_element);
    for (size_t t : {1u, 2u, 4u}) {
      Cluster cluster = ring_of_gpus(t);
      ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, tensor_parallel(t), "gpt", nullptr);
      const double parameters = small_gpt_parameters_per_rank(static_cast<double>(t));
      for (size_t device = 0; device < t; ++device) {
        const StaticMemory& memory = plan.static_memory[device];
        EXPECT_DOUBLE_EQ(memory.parameter_bytes, 2 * parameters);
        EXPECT_DOUBLE_EQ(memory.gradient_bytes, gradient_element * parameters);
        EXPECT_DOUBLE_EQ(memory.optimizer_state_bytes, 12 * parameters);
        EXPECT_DOUBLE_EQ(memory.total(), (14 + gradient_element) * parameters)
            << t << " ranks, device " << device << (fp32_gradients ? ", fp32 gradients" : "");
      }
    }
  }
  run.precision = Precision::kBf16;  // still asking for fp32 gradients
  EXPECT_DOUBLE_EQ(gradient_element_bytes(run, 2), 4);
  run.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(gradient_element_bytes(run, 4), 4);
}

// The data-parallel reduction of a (stage, rank)'s gradients moves them at their element size:
// the small fp16 GPT with t = 2 and D = 2 holds P = small_gpt_parameters_per_rank(2) parameters
// per rank, reduced as one bucket: 2P bytes, 4P with fp32 gradients; under ZeRO 1 the all-reduce
// stands for a reduce-scatter of the gradients and an all-gather of the fp16 parameters,
// (4P + 2P) / 2 = 3P.
TEST(Parallel3d, Fp32GradientsDoubleTheDataParallelReductionOfFp16Parameters) {
  const double parameters = small_gpt_parameters_per_rank(2);
  OpGraph graph = small_gpt(false, 2);
  Cluster cluster = switched_gpus(4);
  auto reduced_bytes = [&](bool fp32_gradients, int zero) {
    RunOptions run;
    run.batch_size = 2;
    run.precision = Precision::kFp16;
    run.optimizer = Optimizer::kAdam;
    run.fp32_gradients = fp32_gradients;
    ParallelismOptions options = tensor_parallel(4);
    options.tensor = 2;
    options.data = 2;
    options.zero_stage = zero;
    options.bucket_bytes = 1e12;
    ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, options, "gpt", nullptr);
    std::vector<double> bytes;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCollective && task.name.rfind("dp-allreduce/stage0/tp0/", 0) == 0) bytes.push_back(task.bytes);
    }
    EXPECT_EQ(bytes.size(), 1u) << "one bucket on rank 0";
    return bytes.empty() ? 0.0 : bytes.front();
  };
  EXPECT_DOUBLE_EQ(reduced_bytes(false, 0), 2 * parameters);
  EXPECT_DOUBLE_EQ(reduced_bytes(true, 0), 4 * parameters);
  EXPECT_DOUBLE_EQ(reduced_bytes(false, 1), 2 * parameters);
  EXPECT_DOUBLE_EQ(reduced_bytes(true, 1), 3 * parameters);
}

// Data parallelism on top of tensor parallelism adds one gradient all-reduce per (stage, rank)
// after the backward: with t = 2 on a switch (every route two hops: 2a + S/B), each rank holds
// 10 (layer norm) + 4 x 10/2 (GEMM shards) = 30 fp32 parameters = 120 bytes, and a ring of D = 2
// replicas takes 2(D-1) (2a) + 2(D-1)/D x 120 / B. The replicas' tensor groups use disjoint links,
// so the rest of the step is unchanged.
TEST(Parallel3d, DataParallelReplicasAddOneGradientAllReducePerRank) {
  Cluster cluster = switched_gpus(4);
  RunOptions run;
  run.batch_size = 8;
  auto step_seconds = [&](int64_t data) {
    ParallelismOptions options = tensor_parallel(4);
    options.tensor = 2;
    options.data = data;
    options.devices.resize(static_cast<size_t>(2 * data));
    ExecutionPlan plan = build_parallel_3d_plan(layer_graph(), cluster, run, options, "dp", nullptr);
    return simulate_plan(plan, cluster).metrics.step_time_seconds;
  };
  const double gradient_bytes = (10 + 4 * 10 / 2.0) * 4;
  const double allreduce = 2 * (2 * kLatency) + gradient_bytes / kBandwidth;
  EXPECT_NEAR(step_seconds(2) - step_seconds(1), allreduce, 1e-7);
}

// A 3D strategy's framework names its collectives' transports, as a data-parallel strategy's
// does (sim/planner/framework_transports.h): under "megatron" every collective of data 2 x
// tensor 2 on one machine (tensor all-reduces, gradient all-reduces) takes NCCL's, whose kernels
// take 0.15 of a GPU they overlap; under "links", the default, none does and the plan lists none.
TEST(Parallel3d, CollectivesTakeTheStrategysFrameworkTransport) {
  Cluster cluster = switched_gpus(4);
  RunOptions run;
  run.batch_size = 8;
  for (Framework framework : {Framework::kLinksOnly, Framework::kMegatron}) {
    SCOPED_TRACE(to_string(framework));
    ParallelismOptions options = tensor_parallel(4);
    options.tensor = 2;
    options.data = 2;
    options.communication.framework = framework;
    const ExecutionPlan plan = build_parallel_3d_plan(layer_graph(), cluster, run, options, "dp", nullptr);
    size_t collectives = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind != TaskKind::kCollective) continue;
      ++collectives;
      if (framework == Framework::kLinksOnly) {
        EXPECT_EQ(task.transport, -1) << task.name;
        continue;
      }
      ASSERT_GE(task.transport, 0) << task.name;
      const Transport& transport = plan.transports.at(static_cast<size_t>(task.transport));
      EXPECT_EQ(transport.id, "nccl") << task.name;
      EXPECT_DOUBLE_EQ(transport.gpu_compute_share, 0.15);
    }
    // The tensor all-reduces of both replicas and each rank's gradient all-reduce.
    EXPECT_GT(collectives, 2u);
    EXPECT_EQ(plan.transports.size(), framework == Framework::kLinksOnly ? 0u : 1u);
  }
}

// A parallelism block reads "framework" as a data_parallel block does; a name it does not know
// is refused at its path, with the names it knows.
TEST(Parallel3d, AParallelismBlockNamesItsFramework) {
  auto scenario_text = [](const std::string& framework) {
    return R"({"model": {"zoo": "gpt", "parameters": {"layers": 2, "hidden": 64, "heads": 4, "sequence": 16,
               "vocabulary": 128}}, "cluster": {"template": "dgx_a100", "nodes": 1},
               "strategy": {"parallelism": {"tensor": 2, "data": 2, "framework": ")" +
           framework + R"("}}, "run": {"batch_size": 4}})";
  };
  const Scenario scenario = testing::scenario_from_text(scenario_text("megatron"));
  EXPECT_EQ(scenario.strategies.front().parallelism->communication.framework, Framework::kMegatron);
  try {
    testing::scenario_from_text(scenario_text("mpi"));
    FAIL() << "accepted";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/strategy/parallelism/framework"), std::string::npos) << message;
    EXPECT_NE(message.find("pytorch-ddp"), std::string::npos) << message;
  }
}

// PyTorch DDP's backward returns once its last bucket is all-reduced, and only then does the
// optimizer step: with buckets of one op each (bucket_bytes 1), data 2 x tensor 2 reduces the
// layer's gradients in several buckets, and every update waits for its rank's last one, not only
// for its own bucket's; the step then ends with all the buckets' all-reduces plus every update,
// none of them overlapping.
TEST(Parallel3d, EveryUpdateWaitsForItsRanksLastGradientBucket) {
  Cluster cluster = switched_gpus(4);
  RunOptions run;
  run.batch_size = 8;
  ParallelismOptions options = tensor_parallel(4);
  options.tensor = 2;
  options.data = 2;
  options.bucket_bytes = 1;
  ExecutionPlan plan = build_parallel_3d_plan(layer_graph(), cluster, run, options, "dp", nullptr);
  std::map<DeviceId, TaskId> last_bucket;  // emission order is the order of the chain
  size_t buckets = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective || task.name.rfind("dp-allreduce/", 0) != 0) continue;
    ++buckets;
    for (DeviceId device : task.group) last_bucket[device] = task.id;
  }
  ASSERT_GE(buckets, 4u);  // at least two buckets per rank
  size_t updates = 0;
  for (const Task& task : plan.tasks) {
    if (task.phase != Phase::kOptimizer) continue;
    ++updates;
    ASSERT_TRUE(last_bucket.count(task.device)) << task.name;
    EXPECT_NE(std::find(task.deps.begin(), task.deps.end(), last_bucket[task.device]), task.deps.end()) << task.name;
  }
  EXPECT_GT(updates, 0u);
}

// Megatron-LM steps the optimizer after the stage's schedule: with tensor 4 and no data
// parallelism, every update of layer h.1's ops on a rank waits for the marker closing that rank's
// last backward slot (micro-batch 0's, the only one), so no update runs between the slot's
// backward tasks and the all-reduces among them.
TEST(Parallel3d, UpdatesWaitForTheStagesLastBackwardSlot) {
  const ExecutionPlan plan = tensor_4_gpt_plan(true);
  std::map<std::string, TaskId> id_of;
  for (const Task& task : plan.tasks) id_of[task.name] = task.id;
  size_t updates = 0;
  for (const Task& task : plan.tasks) {
    if (task.phase != Phase::kOptimizer || task.op.rfind("h.1/", 0) != 0) continue;
    ++updates;
    const std::string rank = task.name.substr(task.name.rfind("/tp"));
    bool after_slot = false;
    for (TaskId dep : task.deps) {
      const Task& before = plan.tasks[dep];
      after_slot = after_slot || (before.op_kind == OpKind::kNoOp && before.phase == Phase::kBackward &&
                                  before.device == task.device && before.name.rfind("mb0/", 0) == 0);
    }
    EXPECT_TRUE(after_slot) << task.name << rank;
  }
  EXPECT_GT(updates, 0u);
}

// data 2 x pipeline 2 x tensor 2 on 8 GPUs: replica d, stage s, rank r runs on GPU 4d + 2s + r;
// tensor all-reduces stay inside a (replica, stage) pair, data-parallel ones join the same
// (stage, rank) of both replicas.
TEST(Parallel3d, PlacesTensorGroupsInnermostStagesNextReplicasOutermost) {
  OpGraph graph = small_gpt(false, 4);
  Cluster cluster = switched_gpus(8);
  RunOptions run;
  run.batch_size = 4;
  ParallelismOptions options = parallel_3d(2, 2, 2, 2);
  std::vector<std::string> notes;
  ExecutionPlan plan = build_parallel_3d_plan(graph, cluster, run, options, "3d", &notes);
  size_t data_collectives = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kCollective) continue;
    if (task.name.find("tp-allreduce") != std::string::npos || task.name.find("pp-allgather") != std::string::npos) {
      ASSERT_EQ(task.group.size(), 2u);
      EXPECT_EQ(task.group[0] % 2, 0u) << task.name;
      EXPECT_EQ(task.group[1], task.group[0] + 1) << task.name;
    } else {
      ++data_collectives;
      ASSERT_EQ(task.group.size(), 2u);
      EXPECT_EQ(task.group[1], task.group[0] + 4) << task.name;
    }
  }
  EXPECT_GE(data_collectives, 4u);  // at least one bucket per (stage, rank)
  ASSERT_GE(notes.size(), 4u);
  EXPECT_NE(notes[1].find("replica 1 stage 0 [GPU:4 GPU:5]"), std::string::npos) << notes[1];
  EXPECT_NE(notes[3].find("[GPU:2 GPU:6]"), std::string::npos) << notes[3];
  SimulatedRun simulated = simulate_plan(plan, cluster);
  EXPECT_GT(simulated.metrics.step_time_seconds, 0);
  EXPECT_DOUBLE_EQ(simulated.metrics.samples_per_second * simulated.metrics.step_time_seconds, 8);
}

// Megatron's scatter/gather (Narayanan et al. SC'21, section 4.1) on tensor 2 x pipeline 2: a
// boundary tensor every rank holds whole (S bytes) leaves stage 0 as S/2 from each rank to its
// counterpart, and an all-gather over stage 1's pair rebuilds S there (an all-reduce task of
// S/2: the same bytes on each ring link); with "scatter_gather": false each rank sends all S.
TEST(Parallel3d, ScatterGatherSendsOneTensorShareAcrossStagesAndAllGathersIt) {
  OpGraph graph = small_gpt(false, 4);
  Cluster cluster = switched_gpus(4);
  RunOptions run;
  run.batch_size = 1;
  ParallelismOptions options = parallel_3d(2, 2, 1, 1);
  auto cross_stage = [](const Task& task) {
    return task.kind == TaskKind::kTransfer && task.source != task.device && task.source / 2 != task.device / 2;
  };
  std::vector<std::string> notes;
  const ExecutionPlan scattered = build_parallel_3d_plan(graph, cluster, run, options, "3d", &notes);
  options.scatter_gather = false;
  const ExecutionPlan whole = build_parallel_3d_plan(graph, cluster, run, options, "3d", &notes);
  std::map<std::string, double> whole_bytes;  // tensor name (no rank) -> bytes per rank
  for (const Task& task : whole.tasks) {
    EXPECT_EQ(task.name.find("pp-allgather"), std::string::npos) << task.name;
    if (cross_stage(task)) whole_bytes[task.name.substr(0, task.name.rfind("/tp"))] = task.bytes;
  }
  ASSERT_FALSE(whole_bytes.empty());
  size_t pieces = 0, gathers = 0;
  for (const Task& task : scattered.tasks) {
    if (cross_stage(task)) {
      ++pieces;
      const std::string tensor = task.name.substr(0, task.name.rfind("/tp"));
      ASSERT_TRUE(whole_bytes.count(tensor)) << task.name;
      EXPECT_DOUBLE_EQ(task.bytes, whole_bytes[tensor] / 2) << task.name;  // S / t
      EXPECT_NE(task.name.find("/scatter"), std::string::npos) << task.name;
    }
    if (task.name.find("pp-allgather") == std::string::npos) continue;
    ++gathers;
    EXPECT_EQ(task.kind, TaskKind::kCollective);
    EXPECT_EQ(task.collective, CollectiveKind::kAllGather);
    ASSERT_EQ(task.group.size(), 2u);
    EXPECT_EQ(task.group[0] / 2, task.group[1] / 2) << task.name;  // one stage's tensor pair
    ASSERT_EQ(task.deps.size(), 2u);                            // one piece from each rank
    const double s_bytes = 2 * scattered.tasks[task.deps[0]].bytes;
    EXPECT_DOUBLE_EQ(task.bytes, s_bytes);  // nccl-tests' size: the whole tensor
    EXPECT_DOUBLE_EQ(task.output_bytes, s_bytes);
  }
  EXPECT_EQ(pieces, 2 * whole_bytes.size());  // both ranks' pieces of every tensor sent whole before
  EXPECT_EQ(gathers, pieces / 2);
}

}  // namespace
}  // namespace tensor_parallel_test
}  // namespace placesim
