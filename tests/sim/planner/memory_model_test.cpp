// The memory model against hand-derived numbers: 16 bytes per parameter for mixed-precision
// Adam, an out-of-memory verdict with its breakdown, and activation recomputation trading a
// forward pass for memory.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/session/pipeline.h"
#include "models/zoo.h"
#include "sim/analytical/pipeline_closed_form.h"
#include "sim/planner/data_parallel_builder.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/plan_builder.h"
#include "sim/report/memory_verdict.h"
#include "sim/core/units_format.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace memory_model_test {  // a unity batch holds several test files
namespace {

using testing::matmul_op;

constexpr double kRelative = 1e-9;

/// `layers` dense layers in a chain on GPU:0, each edge carrying `edge_bytes`.
OpGraph chain(size_t layers, double flops, double parameters, double output_bytes, double edge_bytes) {
  OpGraph graph;
  for (size_t i = 0; i < layers; ++i) {
    OpId id = graph.add_op(matmul_op("dense" + std::to_string(i), flops, parameters, output_bytes));
    if (i > 0) graph.add_edge(id - 1, id, edge_bytes);
  }
  return graph;
}

/// `n` GPUs (1 TFLOP/s, memory-bound kernels free) on one switch, each link `bandwidth` B/s.
Cluster switched_gpus(size_t n, double bandwidth) {
  Cluster cluster = testing::gpus(n, testing::round_gpu(1e12, /*bandwidth=*/1e15));
  const VertexId hub = cluster.add_switch("switch");
  for (DeviceId d = 0; d < n; ++d) cluster.add_link(cluster.device(d).vertex, hub, testing::round_link(bandwidth, 1e-6));
  return cluster;
}

// Mixed precision (Micikevicius et al. 2018) with Adam: 2-byte weights + 2-byte gradients + a
// 4-byte fp32 master copy + two 4-byte fp32 moments = 16 bytes per parameter (ZeRO, section 3.1).
TEST(MemoryModel, MixedPrecisionAdamHolds16BytesPerParameter) {
  const double parameters = 1e6;
  RunOptions run;
  run.precision = Precision::kFp16;
  run.optimizer = Optimizer::kAdam;
  StaticMemory memory = op_static_memory(matmul_op("dense", 1e9, parameters, 0, /*dtype_bytes=*/2), run);
  EXPECT_DOUBLE_EQ(memory.parameter_bytes, 2 * parameters);
  EXPECT_DOUBLE_EQ(memory.gradient_bytes, 2 * parameters);
  EXPECT_DOUBLE_EQ(memory.optimizer_state_bytes, (4 + 2 * 4) * parameters);
  EXPECT_DOUBLE_EQ(memory.total(), 16 * parameters);
  // The same rule for the other optimizers: SGD keeps only the master copy, momentum one moment.
  run.optimizer = Optimizer::kSgd;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 2), run).total(), (2 + 2 + 4) * parameters);
  run.optimizer = Optimizer::kMomentum;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 2), run).total(), (2 + 2 + 4 + 4) * parameters);
  // bf16 is mixed precision too; fp32 Adam is 4 + 4 + 2 x 4 = 16 as well, without a master copy.
  run.optimizer = Optimizer::kAdam;
  run.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 2), run).total(), 16 * parameters);
  run.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 4), run).optimizer_state_bytes, 8 * parameters);
  // Inference holds the weights only.
  run.kind = StepKind::kInference;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 4), run).total(), 4 * parameters);
}

// LAMB as NVIDIA's fused kernels run it, counted pass by pass over parameter-sized buffers.
// fp32: global gradient norm (g), weight norm (w), stage 1 (read g w m v, write m v u), update
// norm (u), stage 2 (read u w, write w) = 13 x 4 = 52 bytes. fp16 with fp32 masters: the inf check
// (read and write g), global norm, stage 1's g and u, the update norm, stage 2's u and the fp16
// weights written = 8 x 2 bytes; the weight norm, stage 1's w m v read and m v written, stage 2's
// w read and written = 8 x 4 bytes: 48. State: m and v, as Adam (so 16 bytes held in fp16).
TEST(MemoryModel, LambMovesItsFusedPassesAndHoldsAdamsState) {
  const double parameters = 1e6;
  const Task fp32 = optimizer_task(matmul_op("dense", 1e9, parameters, 0, 4), {Optimizer::kLamb}, 0, 0, -1, 0);
  EXPECT_DOUBLE_EQ(fp32.memory_bytes, 52 * parameters);
  EXPECT_DOUBLE_EQ(fp32.flops, 20 * parameters);
  const Task fp16 = optimizer_task(matmul_op("dense", 1e9, parameters, 0, 2), {Optimizer::kLamb}, 0, 0, -1, 0);
  EXPECT_DOUBLE_EQ(fp16.memory_bytes, 48 * parameters);
  RunOptions run;
  run.precision = Precision::kFp16;
  run.optimizer = Optimizer::kLamb;
  EXPECT_DOUBLE_EQ(op_static_memory(matmul_op("dense", 1e9, parameters, 0, 2), run).total(), 16 * parameters);
}

// SGD, momentum and Adam in mixed precision update fp32 masters: read the fp16 gradient (2), read
// and write the fp32 weights (8) and moments (0 / 8 / 16), write the fp16 weights (2): 12 / 20 / 28
// bytes per parameter, where fp16 everywhere would be 3 / 5 / 7 x 2 = 6 / 10 / 14; in fp32
// 3 / 5 / 7 x 4 = 12 / 20 / 28 (the same bytes: PyTorch AMP keeps fp32 parameters and gradients).
TEST(MemoryModel, MixedPrecisionUpdatesReadAndWriteTheFp32Masters) {
  const double parameters = 1e6;
  const std::vector<std::pair<Optimizer, double>> expected = {
      {Optimizer::kSgd, 12}, {Optimizer::kMomentum, 20}, {Optimizer::kAdam, 28}};
  for (const auto& [optimizer, bytes] : expected) {
    SCOPED_TRACE(to_string(optimizer));
    EXPECT_DOUBLE_EQ(optimizer_task(matmul_op("dense", 1e9, parameters, 0, 2), {optimizer}, 0, 0, -1, 0).memory_bytes,
                     bytes * parameters);
    EXPECT_DOUBLE_EQ(optimizer_task(matmul_op("dense", 1e9, parameters, 0, 4), {optimizer}, 0, 0, -1, 0).memory_bytes,
                     bytes * parameters);
  }
  // fp8 weights: 1-byte gradient read and weights written beside the same fp32 master and moments.
  EXPECT_DOUBLE_EQ(optimizer_task(matmul_op("dense", 1e9, parameters, 0, 1), {Optimizer::kAdam}, 0, 0, -1, 0).memory_bytes,
                   26 * parameters);
}

// Megatron-LM's mixed-precision optimizer (megatron/optimizer/optimizer.py @de59329835) runs the
// fp32 update between separate passes over parameter-sized buffers. fp16, Adam: fp16 gradients
// copied to fp32 (read 2, write 4), unscaled (read 4, write 4), their norm (read 4), Adam on fp32
// weights, gradients and moments (read 16, write 12), the fp32 weights copied to fp16 (read 4,
// write 2), the fp16 gradient buffer zeroed (write 2): 6 + 8 + 4 + 28 + 6 + 2 = 54 bytes, against
// 28 for the fused update alone. bf16 (fp32 gradient buffer, no loss scaling): 4 + 28 + 6 + 4 = 42.
// fp32: norm, update, zeroing: 4 + 28 + 4 = 36. FLOPs: Adam's 12, the norm's 2, fp16's unscale 1.
TEST(MemoryModel, MegatronsMixedPrecisionOptimizerMakesItsWrappersPasses) {
  const double parameters = 1e6;
  const Op fp16_op = matmul_op("dense", 1e9, parameters, 0, 2);
  const Task fp16 = optimizer_task(fp16_op, {Optimizer::kAdam, Framework::kMegatron, Precision::kFp16}, 0, 0, -1, 0);
  EXPECT_DOUBLE_EQ(fp16.memory_bytes, 54 * parameters);
  EXPECT_DOUBLE_EQ(fp16.flops, 15 * parameters);
  const Task bf16 = optimizer_task(fp16_op, {Optimizer::kAdam, Framework::kMegatron, Precision::kBf16}, 0, 0, -1, 0);
  EXPECT_DOUBLE_EQ(bf16.memory_bytes, 42 * parameters);
  EXPECT_DOUBLE_EQ(bf16.flops, 14 * parameters);
  const Op fp32_op = matmul_op("dense", 1e9, parameters, 0, 4);
  EXPECT_DOUBLE_EQ(optimizer_task(fp32_op, {Optimizer::kAdam, Framework::kMegatron, Precision::kFp32}, 0, 0, -1, 0).memory_bytes,
                   36 * parameters);
  // SGD with momentum: the update's 20 fp32 bytes in the same wrapper (fp16: 26 + 20).
  EXPECT_DOUBLE_EQ(
      optimizer_task(fp16_op, {Optimizer::kMomentum, Framework::kMegatron, Precision::kFp16}, 0, 0, -1, 0).memory_bytes,
      46 * parameters);
  // Other frameworks: the fused update alone.
  EXPECT_DOUBLE_EQ(optimizer_task(fp16_op, {Optimizer::kAdam, Framework::kPyTorchDdp, Precision::kFp16}, 0, 0, -1, 0).memory_bytes,
                   28 * parameters);
  // The held state does not change: 2 + 2 + 12 bytes of fp16 weights, gradients, fp32 copies.
  RunOptions run;
  run.precision = Precision::kFp16;
  run.optimizer = Optimizer::kAdam;
  EXPECT_DOUBLE_EQ(op_static_memory(fp16_op, run).total(), 16 * parameters);
}

TEST(MemoryModel, GptInFp16WithAdamHolds16BytesPerParameterOnItsDevice) {
  Json name = "gpt";
  Json parameters = Json::parse(R"({"layers": 2, "hidden": 64, "heads": 4, "sequence": 32, "vocabulary": 100})");
  OpGraph graph = build_zoo_model(JsonReader(name, "t", "/model/zoo"), JsonReader(parameters, "t"), 4, 2);
  double parameter_count = 0;
  for (OpId v = 0; v < graph.size(); ++v) parameter_count += graph.op(v).parameter_count;
  ASSERT_GT(parameter_count, 0);
  Cluster cluster = testing::gpus(1);
  RunOptions run;
  run.precision = Precision::kFp16;
  run.optimizer = Optimizer::kAdam;
  run.batch_size = 4;
  ExecutionPlan plan = build_plan(graph, Placement{std::vector<DeviceId>(graph.size(), 0), {}}, cluster, run, "gpt");
  EXPECT_DOUBLE_EQ(plan.static_memory[0].total(), 16 * parameter_count);
}

// One dense layer, fp32 Adam, on a GPU too small for it. Peak: P parameters x (4 weights +
// 4 gradients + 8 moments) + its activation A (kept for backward) + a workspace as large as the
// largest GEMM output (A).
TEST(MemoryModel, APlacementThatDoesNotFitGivesAVerdictWithTheBreakdown) {
  const double parameters = 1e6, activation = 4e6;
  DeviceSpec small = testing::round_gpu();
  small.memory_bytes = 20.0 * 1024 * 1024;
  Cluster cluster = testing::gpus(1, small);
  OpGraph graph;
  graph.add_op(matmul_op("dense", 1e9, parameters, activation));
  RunOptions run;
  run.optimizer = Optimizer::kAdam;
  ExecutionPlan plan = build_plan(graph, Placement{{0}, {}}, cluster, run, "oom");
  SimulatedRun result = simulate_plan(plan, cluster);

  const DeviceMetrics& gpu = result.metrics.devices[0];
  EXPECT_DOUBLE_EQ(gpu.peak_memory.parameter_bytes, 4 * parameters);
  EXPECT_DOUBLE_EQ(gpu.peak_memory.gradient_bytes, 4 * parameters);
  EXPECT_DOUBLE_EQ(gpu.peak_memory.optimizer_state_bytes, 8 * parameters);
  EXPECT_DOUBLE_EQ(gpu.peak_memory.activation_bytes, activation);
  EXPECT_DOUBLE_EQ(gpu.peak_memory.workspace_bytes, activation);
  const double needed = 16 * parameters + 2 * activation;
  EXPECT_DOUBLE_EQ(gpu.peak_memory_bytes, needed);
  EXPECT_TRUE(gpu.out_of_memory);

  auto verdicts = out_of_memory_verdicts(result.metrics, cluster);
  ASSERT_EQ(verdicts.size(), 1u);
  // Largest first; ties keep the order activations, parameters, gradients, optimizer, workspace.
  EXPECT_EQ(verdicts[0], "GPU:0 needs " + format_bytes(needed) + ", has 20.0 MiB: optimizer state " +
                             format_bytes(8 * parameters) + ", activations " + format_bytes(activation) +
                             ", parameters " + format_bytes(4 * parameters) + ", gradients " +
                             format_bytes(4 * parameters) + ", workspace " + format_bytes(activation));
  EXPECT_EQ(verdicts[0], "GPU:0 needs 22.9 MiB, has 20.0 MiB: optimizer state 7.6 MiB, activations 3.8 MiB, "
                         "parameters 3.8 MiB, gradients 3.8 MiB, workspace 3.8 MiB");
}

// With recomputation only the tensors that cross from one layer into the next are kept until
// their consumer's backward (the checkpoints a layer is recomputed from): three layers of two
// ops each in a chain have two; the same chain without layer names has none.
TEST(MemoryModel, RecomputationKeepsOnlyTheTensorsThatCrossLayers) {
  for (bool layered : {true, false}) {
    OpGraph graph;
    for (size_t i = 0; i < 6; ++i) {
      Op op = matmul_op("l" + std::to_string(i / 2) + "/op" + std::to_string(i % 2), 1e9, 10, 1e6);
      if (layered) op.layer = "l" + std::to_string(i / 2);
      OpId id = graph.add_op(op);
      if (i > 0) graph.add_edge(id - 1, id, 1e6);
    }
    Cluster cluster = testing::gpus(1);
    RunOptions run;
    run.recompute = true;
    ExecutionPlan plan = build_plan(graph, Placement{std::vector<DeviceId>(6, 0), {}}, cluster, run, "recompute");
    std::vector<std::pair<std::string, std::string>> kept;  // (forward task, the backward it waits for)
    for (const Task& task : plan.tasks) {
      for (TaskId until : task.keep_until) kept.emplace_back(task.op, plan.tasks[until].op);
    }
    if (layered) {
      EXPECT_EQ(kept, (std::vector<std::pair<std::string, std::string>>{{"l0/op1", "l1/op0"}, {"l1/op1", "l2/op0"}}));
    } else {
      EXPECT_TRUE(kept.empty());
    }
  }
}

// A chain of L compute-bound layers on one GPU. Without recomputation every activation A stays
// until its backward: the peak is at the last layer's backward, L A plus the gradient E it
// produces. With recomputation an activation lives only until its consumer's forward ends (2 A
// at a time), and each backward re-runs its forward: the step grows by the forward FLOPs / peak.
TEST(MemoryModel, RecomputationLowersPeakActivationsAndAddsOneForwardPass) {
  const size_t layers = 4;
  const double flops = 1e10, activation = 1e6, gradient = 1e5, peak = 1e12;
  Cluster cluster = testing::gpus(1, testing::round_gpu(peak, /*bandwidth=*/1e15));
  OpGraph graph = chain(layers, flops, /*parameters=*/10, activation, gradient);
  Placement placement{std::vector<DeviceId>(layers, 0), {}};
  RunOptions run;
  SimulatedRun kept = simulate_plan(build_plan(graph, placement, cluster, run, "kept"), cluster);
  run.recompute = true;
  ExecutionPlan recompute_plan = build_plan(graph, placement, cluster, run, "recompute");
  SimulatedRun recomputed = simulate_plan(recompute_plan, cluster);

  EXPECT_DOUBLE_EQ(kept.metrics.devices[0].peak_memory.activation_bytes, layers * activation + gradient);
  EXPECT_DOUBLE_EQ(recomputed.metrics.devices[0].peak_memory.activation_bytes, 2 * activation);

  const double forward_pass = layers * flops / peak;
  EXPECT_NEAR(recomputed.metrics.step_time_seconds - kept.metrics.step_time_seconds, forward_pass,
              forward_pass * 1e-6);
  // Each backward task carries its op's forward FLOPs on top of its own.
  for (const Task& task : recompute_plan.tasks) {
    if (task.phase == Phase::kBackward) {
      EXPECT_DOUBLE_EQ(task.flops, 3 * flops) << task.name;
    }
  }
}

// Devices over capacity come worst first (most bytes lacking; ties in device order), and an
// error shows the worst three and counts the rest.
TEST(MemoryModel, VerdictsComeWorstFirstAndAnErrorShowsThreeAndCountsTheRest) {
  DeviceSpec spec = testing::round_gpu();
  spec.memory_bytes = 1024.0 * 1024 * 1024;  // 1 GiB
  Cluster cluster = testing::gpus(6, spec);
  RunMetrics metrics;
  // GPU:d needs 1 GiB + lacking[d] MiB; GPU:1 fits (lacks nothing).
  const double lacking_mib[] = {1, 0, 3, 2, 3, 5};
  for (DeviceId d = 0; d < 6; ++d) {
    DeviceMetrics device;
    device.device = d;
    device.memory_capacity_bytes = spec.memory_bytes;
    device.peak_memory.parameter_bytes = spec.memory_bytes + lacking_mib[d] * 1024 * 1024;
    device.peak_memory_bytes = device.peak_memory.parameter_bytes;
    device.out_of_memory = device.peak_memory_bytes > device.memory_capacity_bytes;
    metrics.devices.push_back(device);
  }
  std::vector<std::string> verdicts = out_of_memory_verdicts(metrics, cluster);
  ASSERT_EQ(verdicts.size(), 5u);
  // Order by bytes lacking: GPU:5 (5 MiB), GPU:2 and GPU:4 (3 MiB, device order), GPU:3, GPU:0.
  const char* order[] = {"GPU:5 ", "GPU:2 ", "GPU:4 ", "GPU:3 ", "GPU:0 "};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(verdicts[i].rfind(order[i], 0), 0u) << verdicts[i];
  EXPECT_EQ(verdicts[0], "GPU:5 needs " + format_bytes(spec.memory_bytes + 5 * 1024 * 1024) + ", has 1.0 GiB: parameters " +
                             format_bytes(spec.memory_bytes + 5 * 1024 * 1024));
  EXPECT_EQ(worst_verdicts(verdicts), verdicts[0] + "; " + verdicts[1] + "; " + verdicts[2] +
                                          "; and 2 more over their capacity");
  EXPECT_EQ(worst_verdicts({verdicts[0]}), verdicts[0]);
  EXPECT_EQ(worst_verdicts({verdicts[0], verdicts[1], verdicts[2]}),
            verdicts[0] + "; " + verdicts[1] + "; " + verdicts[2]);
}

}  // namespace
}  // namespace memory_model_test
}  // namespace placesim

namespace placesim {
namespace memory_model_test {  // a unity batch holds several test files
namespace {

Op activation_op(const std::string& name, const std::string& type, OpKind kind) {
  Op op;
  op.name = name;
  op.type = type;
  op.kind = kind;
  op.forward_flops = 1e6;
  op.backward_flops = 1e6;
  op.output_bytes = 1e6;
  op.dtype_bytes = 4;
  return op;
}

// What each backward keeps alive, from TensorFlow's gradient functions: a convolution's gradient
// reads its input (not its output), FusedBatchNormGrad its input, ReluGrad the ReLU's output,
// an add nothing. conv -> bn -> relu -> add -> loss: the conv's output (the BN's input) lives
// until the BN's backward, the BN's output (read by no gradient) only until the ReLU's
// forward, the ReLU's output until its own backward and the add's backward, which reads nothing.
TEST(MemoryModel, BackwardKeepsOnlyTheActivationsItsGradientReads) {
  OpGraph graph;
  OpId conv = graph.add_op(testing::matmul_op("conv", 1e9, 1e3, 1e6));
  graph.mutable_op(conv).type = "Conv2D";
  graph.mutable_op(conv).kind = OpKind::kConv;
  OpId bn = graph.add_op(activation_op("bn", "FusedBatchNorm", OpKind::kNormalization));
  OpId relu = graph.add_op(activation_op("relu", "Relu", OpKind::kElementwise));
  OpId add = graph.add_op(activation_op("add", "AddV2", OpKind::kElementwise));
  OpId loss = graph.add_op(activation_op("loss", "SparseSoftmaxCrossEntropyWithLogits", OpKind::kOther));
  graph.add_edge(conv, bn, 1e6);
  graph.add_edge(bn, relu, 1e6);
  graph.add_edge(relu, add, 1e6);
  graph.add_edge(add, loss, 1e6);
  Cluster cluster = testing::gpus(1);
  DataParallelOptions options;
  options.replicas = {0};
  RunOptions run;
  ExecutionPlan plan = build_data_parallel_plan(graph, cluster, run, options, "reads", nullptr);
  auto find = [&](const std::string& phase, const std::string& op) {
    for (const Task& task : plan.tasks) {
      if (task.op == op && to_string(task.phase) == phase && task.kind == TaskKind::kCompute) return task.id;
    }
    ADD_FAILURE() << "no " << phase << " task of " << op;
    return TaskId{0};
  };
  auto kept_until = [&](const std::string& op, const std::string& by) {
    const Task& forward = plan.tasks[find("forward", op)];
    const TaskId backward = find("backward", by);
    return std::count(forward.keep_until.begin(), forward.keep_until.end(), backward) > 0 ||
           std::count(forward.deps.begin(), forward.deps.end(), backward) > 0;
  };
  EXPECT_TRUE(kept_until("conv", "bn")) << "FusedBatchNormGrad reads the BN's input";
  EXPECT_FALSE(kept_until("conv", "conv")) << "a convolution's gradient reads its input, not its output";
  EXPECT_FALSE(kept_until("bn", "bn")) << "no gradient reads the BN's output";
  EXPECT_FALSE(kept_until("bn", "relu")) << "ReluGrad reads the ReLU's output, not its input";
  EXPECT_TRUE(kept_until("relu", "relu"));
  EXPECT_FALSE(kept_until("relu", "add")) << "an add's gradient reads nothing";
  // The BN's backward does not depend on the BN's forward directly (that would keep its output
  // alive) but still runs after it, through the ReLU's gradient.
  const Task& bn_backward = plan.tasks[find("backward", "bn")];
  EXPECT_EQ(std::count(bn_backward.deps.begin(), bn_backward.deps.end(), find("forward", "bn")), 0);
}

// A gradient all-reduce or push reads the gradients (static memory), not the activation
// gradients of the backward tasks it waits for, so it keeps none of them alive. Four dense layers
// in a chain (each output A = 0.1 MB, each gradient between layers E = 1 MB), two replicas, the
// all-reduce after the whole backward (or each variable pushed to a third GPU as parameter
// server) over slow links. Backward runs B3, B2, B1, B0; B_i's output (the gradient of layer
// i - 1's output, E) is read by B_{i-1}; layer i - 1's output is kept for B_i. While B2 runs: A0,
// A1 (for B1, B2), B3's and B2's gradients: 2 A + 2 E = 2.2 MB, the peak (B3: 4 A + E = 1.4 MB;
// B1: A + 2 E). Were the gradients kept until the all-reduce, B1 would see A + 3 E = 3.1 MB. One
// replica alone peaks the same.
TEST(MemoryModel, AGradientAllReduceOrPushKeepsNoActivationGradientAlive) {
  const double activation = 1e5, gradient = 1e6;
  OpGraph graph = chain(4, /*flops=*/1e9, /*parameters=*/1e4, activation, gradient);
  const Cluster cluster = switched_gpus(3, /*bandwidth=*/1e6);  // 40 KB of gradients: ~40 ms, 4 ms of compute
  const double expected = 2 * activation + 2 * gradient;
  RunOptions run;
  for (Aggregation aggregation : {Aggregation::kAllReduce, Aggregation::kParameterServer}) {
    DataParallelOptions options;
    options.aggregation = aggregation;
    options.algorithm = CollectiveAlgorithm::kRing;
    options.overlap = false;
    options.replicas = {0, 1};
    if (aggregation == Aggregation::kParameterServer) options.parameter_servers = {2};
    const SimulatedRun simulated = simulate_plan(build_data_parallel_plan(graph, cluster, run, options, "dp", nullptr), cluster);
    options.replicas = {0};
    const SimulatedRun alone =
        simulate_plan(build_data_parallel_plan(graph, cluster, run, options, "one", nullptr), cluster);
    const std::string kind = aggregation == Aggregation::kAllReduce ? "all-reduce" : "parameter server";
    for (DeviceId d : {0, 1}) {
      EXPECT_DOUBLE_EQ(simulated.metrics.devices[d].peak_memory.activation_bytes, expected) << kind << ", GPU:" << d;
    }
    EXPECT_DOUBLE_EQ(alone.metrics.devices[0].peak_memory.activation_bytes, expected) << kind;
    EXPECT_GT(simulated.metrics.step_time_seconds, 5 * 4e-3) << kind << ": communication dominates";
  }
}

// The same for a pipeline stage's gradient reductions in a `parallelism` strategy: two stages
// of eight bias adds (gradients flow between them, their backward reads no activation), two
// replicas, 1F1B over 4 micro-batches, one gradient bucket per op. Each micro-batch's gradient
// between two ops is 1 MB / 4; one lives while the op that made it and the op that reads it run,
// so stage 0 peaks at 2 x 250 KB whether its gradients reduce over a 1 TB/s or a 1 MB/s link
// between the replicas, in the simulation and in the closed form. Were the last micro-batch's
// gradients kept until their buckets' reductions, stage 0 would hold its 7 at once, 1.75 MB.
TEST(MemoryModel, AStagesActivationsDoNotWaitForItsGradientReduction) {
  const double gradient = 1e6;
  OpGraph graph;
  for (size_t i = 0; i < 16; ++i) {
    Op op = testing::matmul_op("bias" + std::to_string(i), /*flops=*/1e9, /*parameters=*/1e4, gradient);
    op.type = "AddV2";
    op.kind = OpKind::kElementwise;
    const OpId id = graph.add_op(op);
    if (i > 0) graph.add_edge(id - 1, id, gradient);
  }
  RunOptions run;
  run.batch_size = 4;
  ParallelismOptions options;
  options.pipeline = 2;
  options.data = 2;
  options.micro_batches = 4;
  options.algorithm = CollectiveAlgorithm::kRing;
  options.devices = {0, 1, 2, 3};
  options.bucket_bytes = 1;
  std::vector<double> simulated, closed_form;
  for (double bandwidth : {1e12, 1e6}) {
    // Replica d's stage s on GPU 2 d + s: the stages' links fast, the replicas' `bandwidth`.
    Cluster cluster = testing::gpus(4, testing::round_gpu(1e12, /*bandwidth=*/1e15));
    for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 3}}) {
      cluster.add_link(cluster.device(a).vertex, cluster.device(b).vertex, testing::round_link(1e12, 1e-6));
    }
    for (auto [a, b] : {std::pair{0, 2}, std::pair{1, 3}}) {
      cluster.add_link(cluster.device(a).vertex, cluster.device(b).vertex, testing::round_link(bandwidth, 1e-6));
    }
    const SimulatedRun run_of = simulate_plan(build_parallel_3d_plan(graph, cluster, run, options, "3d", nullptr), cluster);
    simulated.push_back(run_of.metrics.devices[0].peak_memory.activation_bytes);
    closed_form.push_back(estimate_3d_step_closed_form(graph, cluster, run, options).stage_peak_memory[0].activation_bytes);
  }
  EXPECT_DOUBLE_EQ(simulated[0], 2 * gradient / 4);
  EXPECT_DOUBLE_EQ(simulated[1], 2 * gradient / 4);
  EXPECT_DOUBLE_EQ(closed_form[0], 2 * gradient / 4);
  EXPECT_DOUBLE_EQ(closed_form[1], 2 * gradient / 4);
}

}  // namespace
}  // namespace memory_model_test
}  // namespace placesim
