// Automatic placement (docs/placement.md): m-ETF and m-SCT on small hand-made graphs give the
// placement derived by hand; no algorithm places over a device's memory when a feasible
// placement exists (and the memory ledger bounds the simulated peak); an infeasible graph gets a
// verdict naming the op and its memory; CPU-only ops and colocation groups are honoured.
#include <gtest/gtest.h>

#include "sim/session/pipeline.h"
#include "sim/core/input_error.h"
#include "sim/spec/spec_error.h"
#include "sim/auto_placement/auto_placer.h"
#include "sim/planner/plan_builder.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::matmul_op;

using testing::round_gpu;
using testing::round_link;

constexpr double kMs = 1e-3;

/// `gpus` round GPUs (1e12 FLOP/s, efficiency 1, no launch overhead, `memory_bytes` each),
/// optionally after a CPU of 1e10 FLOP/s; every pair of devices joined by its own 1 GB/s link
/// with no latency, so a tensor of B bytes takes B / 1e9 seconds between any two devices.
Cluster cluster_of(size_t gpus, double memory_bytes = 16e9, bool with_cpu = false) {
  Cluster cluster;
  cluster.name = "test";
  if (with_cpu) {
    ClusterDevice cpu;
    cpu.name = DeviceName{"localhost", 0, 0, DeviceKind::kCpu, 0};
    cpu.spec = round_gpu(1e10);
    cpu.spec.kind = DeviceKind::kCpu;
    cpu.spec.memory_bytes = 64e9;
    cluster.add_device(cpu, "CPU:0");
  }
  for (size_t i = 0; i < gpus; ++i) {
    ClusterDevice gpu;
    gpu.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, static_cast<int>(i)};
    gpu.spec = round_gpu();
    gpu.spec.memory_bytes = memory_bytes;
    cluster.add_device(gpu, "GPU:" + std::to_string(i));
  }
  for (DeviceId a = 0; a < cluster.devices().size(); ++a) {
    for (DeviceId b = a + 1; b < cluster.devices().size(); ++b) {
      cluster.add_link(cluster.device(a).vertex, cluster.device(b).vertex, round_link(1e9, 0));
    }
  }
  return cluster;
}

RunOptions inference() {
  RunOptions run;
  run.kind = StepKind::kInference;
  return run;
}

AutoPlacement place(PlacementAlgorithm algorithm, const OpGraph& graph, const Cluster& cluster, const RunOptions& run) {
  AutoPlacementOptions options;
  options.algorithm = algorithm;
  return auto_place(graph, cluster, run, options);
}

std::string device_of(const AutoPlacement& placed, const OpGraph& graph, const Cluster& cluster, const std::string& op) {
  return cluster.device(placed.placement.device_of_op[graph.find(op)]).name.local();
}

// Fork-join, inference on two GPUs: a (1 ms) feeds b (2 ms) and c (2 ms), which feed d (1 ms);
// every tensor is 1e6 bytes, 1 ms on the link.
//   a: ready alone, starts at 0 on GPU:0 and GPU:1 alike; the tie goes to GPU:0. a = [0, 1].
//   b, c: both start at 1 on GPU:0 (GPU:1: 1 + 1 ms transfer = 2); equal bottom levels (3 ms), so
//         b goes first, in topological order: b on GPU:0 = [1, 3].
//   c: GPU:0 is free at 3, GPU:1 gets a's output at 2: c on GPU:1 = [2, 4].
//   d: GPU:0 at max(3, b 3, c 4 + 1) = 5; GPU:1 at max(4, b 3 + 1, c 4) = 4: d on GPU:1 = [4, 5].
// m-ETF's schedule ends at 5 ms (6 ms on one GPU).
TEST(AutoPlacement, MEtfPlacesAForkJoinAsDerivedByHand) {
  OpGraph graph;
  OpId a = graph.add_op(matmul_op("a", 1e9)), b = graph.add_op(matmul_op("b", 2e9)), c = graph.add_op(matmul_op("c", 2e9)),
       d = graph.add_op(matmul_op("d", 1e9));
  graph.add_edge(a, b);
  graph.add_edge(a, c);
  graph.add_edge(b, d);
  graph.add_edge(c, d);
  Cluster cluster = cluster_of(2);
  AutoPlacement placed = place(PlacementAlgorithm::kMEtf, graph, cluster, inference());
  EXPECT_EQ(device_of(placed, graph, cluster, "a"), "GPU:0");
  EXPECT_EQ(device_of(placed, graph, cluster, "b"), "GPU:0");
  EXPECT_EQ(device_of(placed, graph, cluster, "c"), "GPU:1");
  EXPECT_EQ(device_of(placed, graph, cluster, "d"), "GPU:1");
  EXPECT_NEAR(placed.estimated_seconds, 5 * kMs, 1e-12);
}

// a (1 ms) feeds c (1 ms, listed first) and d (5 ms); a's output is 1e6 bytes (1 ms on the link).
// Favourite pairs: a -> c and a -> d carry the same volume (inference: the forward tensor only),
// so the earlier edge wins: c is a's favourite child; d has no favourite parent.
//   a = [0, 1] on GPU:0 (tie with GPU:1 broken by device order).
//   c and d can both start at 1 on GPU:0; d's bottom level (5 ms) beats c's (1 ms): d = [1, 6].
//   m-ETF: c starts at 6 on GPU:0 or at 1 + 1 = 2 on GPU:1: c on GPU:1 = [2, 3]; ends at 6 ms.
//   m-SCT: c must run on its favourite parent's GPU:0: c = [6, 7]; ends at 7 ms.
TEST(AutoPlacement, MSctKeepsAFavouriteChildOnItsParentsDevice) {
  OpGraph graph;
  OpId a = graph.add_op(matmul_op("a", 1e9)), c = graph.add_op(matmul_op("c", 1e9)), d = graph.add_op(matmul_op("d", 5e9));
  graph.add_edge(a, c);
  graph.add_edge(a, d);
  Cluster cluster = cluster_of(2);

  PlacementProblem problem = make_placement_problem(graph, cluster, inference(), {});
  std::vector<std::optional<OpId>> parents = favourite_parents(problem);
  EXPECT_EQ(parents[c], std::optional<OpId>(a));
  EXPECT_EQ(parents[d], std::nullopt);
  EXPECT_EQ(parents[a], std::nullopt);

  AutoPlacement etf = place(PlacementAlgorithm::kMEtf, graph, cluster, inference());
  EXPECT_EQ(device_of(etf, graph, cluster, "d"), "GPU:0");
  EXPECT_EQ(device_of(etf, graph, cluster, "c"), "GPU:1");
  EXPECT_NEAR(etf.estimated_seconds, 6 * kMs, 1e-12);

  AutoPlacement sct = place(PlacementAlgorithm::kMSct, graph, cluster, inference());
  EXPECT_EQ(device_of(sct, graph, cluster, "a"), "GPU:0");
  EXPECT_EQ(device_of(sct, graph, cluster, "d"), "GPU:0");
  EXPECT_EQ(device_of(sct, graph, cluster, "c"), "GPU:0");
  EXPECT_NEAR(sct.estimated_seconds, 7 * kMs, 1e-12);
}

// Favourite pairs go by decreasing volume: with training, an edge carries its forward tensor
// and its gradient; a heavier edge into d makes c -> d a favourite pair before b -> d.
TEST(AutoPlacement, FavouritePairsTakeTheHeaviestEdgesFirst) {
  OpGraph graph;
  OpId b = graph.add_op(matmul_op("b", 1e9, 10, 1e6)), c = graph.add_op(matmul_op("c", 1e9, 10, 3e6)),
       d = graph.add_op(matmul_op("d", 1e9, 10));
  graph.add_edge(b, d);
  graph.add_edge(c, d);
  PlacementProblem problem = make_placement_problem(graph, cluster_of(2), RunOptions{}, {});
  // Volumes: b -> d = 1e6 + 1e6 (gradient), c -> d = 3e6 + 3e6: c -> d is taken, then b -> d
  // is refused (d already has a favourite parent).
  std::vector<std::optional<OpId>> parents = favourite_parents(problem);
  EXPECT_EQ(parents[d], std::optional<OpId>(c));
}

// Four training layers of 1e8 fp32 parameters: with SGD each holds 8e8 bytes of parameters and
// gradients plus about 3e6 of activations, gradients and workspace. A 2e9-byte GPU holds two
// layers (1.6e9 + a few MB) and not three (2.4e9), so the only feasible placements put two
// layers on each GPU. Every algorithm must find one, its ledger must bound the peak that the full
// simulation measures, and the simulated peak must fit; without the limit m-ETF keeps the chain
// on one GPU (every cut only adds transfers), and TensorFlow's default placer (all on GPU:0) does
// not fit.
TEST(AutoPlacement, NoAlgorithmPlacesOverMemoryWhenAFeasiblePlacementExists) {
  OpGraph graph;
  for (int i = 0; i < 4; ++i) {
    OpId id = graph.add_op(matmul_op("layer" + std::to_string(i), 1e9, 1e8));
    if (i > 0) graph.add_edge(id - 1, id);
  }
  RunOptions run;  // training, SGD, fp32
  Cluster tight = cluster_of(2, 2e9);
  for (PlacementAlgorithm algorithm : all_placement_algorithms()) {
    SCOPED_TRACE(to_string(algorithm));
    AutoPlacement placed = place(algorithm, graph, tight, run);
    std::vector<size_t> layers(2, 0);
    for (DeviceId d : placed.placement.device_of_op) ++layers[d];
    EXPECT_EQ(layers, (std::vector<size_t>{2, 2}));
    ExecutionPlan plan = build_plan(graph, placed.placement, tight, run, "tight");
    RunMetrics metrics = simulate_plan(plan, tight).metrics;
    for (const DeviceMetrics& device : metrics.devices) {
      EXPECT_FALSE(device.out_of_memory);
      EXPECT_LE(device.peak_memory_bytes, placed.reserved_bytes[device.device]);
      EXPECT_LE(placed.reserved_bytes[device.device], 2e9);
    }
  }
  AutoPlacement roomy = place(PlacementAlgorithm::kMEtf, graph, cluster_of(2, 16e9), run);
  EXPECT_EQ(roomy.placement.device_of_op, (std::vector<DeviceId>{0, 0, 0, 0}));
  Placement all_on_gpu0 = place_ops(graph, tight, {});
  RunMetrics metrics = simulate_plan(build_plan(graph, all_on_gpu0, tight, run, "default"), tight).metrics;
  EXPECT_TRUE(metrics.devices[0].out_of_memory);
}

// Six such layers need 4.8e9 bytes and two GPUs have 4e9: every algorithm stops at the first
// layer that has no room (the fifth: two per GPU) and says what it needs and what is free.
TEST(AutoPlacement, AnInfeasibleGraphIsAVerdictNamingTheOpAndItsMemory) {
  OpGraph graph;
  for (int i = 0; i < 6; ++i) {
    OpId id = graph.add_op(matmul_op("layer" + std::to_string(i), 1e9, 1e8));
    if (i > 0) graph.add_edge(id - 1, id);
  }
  Cluster tight = cluster_of(2, 2e9);
  for (PlacementAlgorithm algorithm : all_placement_algorithms()) {
    SCOPED_TRACE(to_string(algorithm));
    try {
      place(algorithm, graph, tight, RunOptions{});
      ADD_FAILURE() << "expected a SpecError";
    } catch (const SpecError& error) {
      std::string message = error.what();
      EXPECT_EQ(error.scope(), SpecError::Scope::kStrategy);
      EXPECT_EQ(error.option(), "placement/auto");
      EXPECT_NE(message.find("no device with room for op \"layer4\""), std::string::npos) << message;
      EXPECT_NE(message.find("parameters, gradients and optimizer state 762.9 MiB"), std::string::npos) << message;
      EXPECT_NE(message.find("GPU:0 has"), std::string::npos) << message;
      EXPECT_NE(message.find("free of 1.9 GiB"), std::string::npos) << message;
    }
  }
}

// A CPU-only input and a variable colocated with its read: every algorithm keeps the input on
// the CPU and the variable with its read, wherever it puts them.
TEST(AutoPlacement, CpuOnlyOpsAndColocationGroupsAreHonoured) {
  OpGraph graph;
  Op input = matmul_op("input", 0);
  input.kind = OpKind::kDataMovement;
  input.cpu_only = true;
  Op weights = matmul_op("w", 0, 1e6, 4e6);
  weights.kind = OpKind::kVariable;
  Op read = matmul_op("w/read", 0, 0, 4e6);
  read.kind = OpKind::kDataMovement;
  read.colocate_with = "w";
  OpId i = graph.add_op(input), w = graph.add_op(weights), r = graph.add_op(read), m = graph.add_op(matmul_op("mm", 4e9));
  graph.add_edge(w, r);
  graph.add_edge(i, m);
  graph.add_edge(r, m);
  Cluster cluster = cluster_of(2, 16e9, /*with_cpu=*/true);
  for (PlacementAlgorithm algorithm : all_placement_algorithms()) {
    SCOPED_TRACE(to_string(algorithm));
    AutoPlacement placed = place(algorithm, graph, cluster, RunOptions{});
    EXPECT_EQ(device_of(placed, graph, cluster, "input"), "CPU:0");
    EXPECT_EQ(placed.placement.device_of_op[w], placed.placement.device_of_op[r]);
    EXPECT_NE(device_of(placed, graph, cluster, "mm"), "CPU:0");  // 100x slower there
  }
}

}  // namespace
}  // namespace placesim
