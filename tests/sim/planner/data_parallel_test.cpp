// Data-parallel plans against hand-derived behaviour: the parameter server's link as the
// bottleneck, stragglers in sync and async training, staleness, gradient bucketing.
#include <gtest/gtest.h>

#include "sim/analytical/analytical_engine.h"

#include <cmath>

#include "sim/cluster/device_spread.h"
#include "sim/cost/cost_model.h"
#include "sim/session/pipeline.h"
#include "sim/plan/collective_schedule.h"
#include "sim/planner/data_parallel_builder.h"
#include "sim/planner/step_emitter.h"
#include "sim/report/data_parallel_metrics.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace data_parallel_test {  // a unity batch holds several test files
namespace {

constexpr double kGpuPeak = 1e13;          // FLOP/s
constexpr double kGpuMemory = 1e13;        // bytes/s: optimizer updates are negligible
constexpr double kFastLink = 1e11;         // bytes/s
constexpr double kLatency = 1e-6;

/// `workers` GPUs and `servers` CPUs hanging off one switch; GPU links are fast, each CPU's
/// link has bandwidth `server_bandwidth` (the bottleneck under test).
Cluster star(size_t workers, size_t servers, double server_bandwidth) {
  Cluster cluster;
  cluster.name = "star";
  DeviceSpec gpu = testing::round_gpu(kGpuPeak, kGpuMemory);
  DeviceSpec cpu = gpu;
  cpu.kind = DeviceKind::kCpu;
  cpu.id = "test-cpu";
  VertexId hub = 0;
  std::vector<DeviceId> ids;
  for (size_t i = 0; i < servers; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kCpu, static_cast<int>(i)};
    device.spec = cpu;
    ids.push_back(cluster.add_device(device, "CPU:" + std::to_string(i)));
  }
  for (size_t i = 0; i < workers; ++i) {
    ClusterDevice device;
    device.name = DeviceName{"localhost", 0, 0, DeviceKind::kGpu, static_cast<int>(i)};
    device.spec = gpu;
    ids.push_back(cluster.add_device(device, "GPU:" + std::to_string(i)));
  }
  hub = cluster.add_switch("switch");
  for (DeviceId id : ids) {
    bool server = cluster.device(id).name.kind == DeviceKind::kCpu;
    cluster.add_link(cluster.device(id).vertex, hub, testing::round_link(server ? server_bandwidth : kFastLink, kLatency));
  }
  return cluster;
}

std::vector<DeviceId> of_kind(const Cluster& cluster, DeviceKind kind) {
  std::vector<DeviceId> ids;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    if (cluster.device(id).name.kind == kind) ids.push_back(id);
  }
  return ids;
}

/// A chain of `layers` dense layers, each `flops` forward and `parameters` parameters.
OpGraph chain(size_t layers, double flops, double parameters) {
  OpGraph graph;
  for (size_t i = 0; i < layers; ++i) {
    Op op;
    op.name = "dense" + std::to_string(i);
    op.type = "MatMul";
    op.kind = OpKind::kMatMul;
    op.forward_flops = flops;
    op.backward_flops = 2 * flops;
    op.parameter_count = parameters;
    op.output_bytes = 1e3;
    OpId id = graph.add_op(op);
    if (i > 0) graph.add_edge(id - 1, id);
  }
  return graph;
}

struct Outcome {
  ExecutionPlan plan;
  SimulatedRun run;
  DataParallelMetrics dp;
};

Outcome simulate(const OpGraph& graph, const Cluster& cluster, const DataParallelOptions& options, int64_t steps = 1,
                 double jitter = 0) {
  RunOptions run;
  run.steps = steps;
  run.jitter_sigma = jitter;
  Outcome outcome;
  outcome.plan = build_data_parallel_plan(graph, cluster, run, options, "dp", nullptr);
  outcome.run = simulate_plan(outcome.plan, cluster);
  outcome.dp = compute_data_parallel_metrics(outcome.plan, outcome.run.timeline);
  return outcome;
}

DataParallelOptions parameter_server(const Cluster& cluster, size_t workers, size_t servers) {
  DataParallelOptions options;
  options.aggregation = Aggregation::kParameterServer;
  auto gpus = of_kind(cluster, DeviceKind::kGpu);
  auto cpus = of_kind(cluster, DeviceKind::kCpu);
  options.replicas.assign(gpus.begin(), gpus.begin() + static_cast<long>(workers));
  options.parameter_servers.assign(cpus.begin(), cpus.begin() + static_cast<long>(servers));
  return options;
}

// One PS, N workers each pulling then pushing P bytes through the PS's link of bandwidth B:
// the link carries N x P each way, one after the other, so the step grows by 2 x P / B per worker.
TEST(ParameterServer, CommunicationGrowsAsTwoNPOverBThroughTheServersLink) {
  const double parameters = 25e6, bytes = 4 * parameters, bandwidth = 1e9;
  OpGraph graph = chain(1, 1e9, parameters);
  auto step_time = [&](size_t workers) {
    Cluster cluster = star(workers, 1, bandwidth);
    return simulate(graph, cluster, parameter_server(cluster, workers, 1)).run.metrics.step_time_seconds;
  };
  const double two = step_time(2), four = step_time(4), eight = step_time(8);
  const double per_two_workers = 2 * 2 * bytes / bandwidth;  // two more workers: 2 x 2 x P / B
  EXPECT_NEAR(four - two, per_two_workers, per_two_workers * 0.02);
  EXPECT_NEAR(eight - four, 2 * per_two_workers, 2 * per_two_workers * 0.02);
  EXPECT_GT(2 * 8 * bytes / bandwidth / eight, 0.95);  // the PS link dominates the step
}

// Sharding k equal variables over k servers (each with its own link) divides the traffic k-fold.
TEST(ParameterServer, KServersShrinkTheCommunicationAboutKFold) {
  const double parameters = 25e6, bandwidth = 1e9;
  const size_t workers = 8;
  OpGraph graph = chain(4, 1e8, parameters / 4);
  Cluster one = star(workers, 1, bandwidth);
  Cluster four = star(workers, 4, bandwidth);
  double single = simulate(graph, one, parameter_server(one, workers, 1)).run.metrics.step_time_seconds;
  double sharded = simulate(graph, four, parameter_server(four, workers, 4)).run.metrics.step_time_seconds;
  EXPECT_NEAR(single / sharded, 4.0, 4.0 * 0.15);
}

TEST(ParameterServer, GreedyShardingBalancesBytesRoundRobinFollowsOrder) {
  OpGraph graph;
  for (double parameters : {100.0, 10.0, 10.0, 10.0, 10.0}) {
    Op op;
    op.name = "v" + std::to_string(graph.size());
    op.parameter_count = parameters;
    graph.add_op(op);
  }
  EXPECT_EQ(shard_variables(graph, 2, Sharding::kRoundRobin), (std::vector<size_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(shard_variables(graph, 2, Sharding::kGreedy), (std::vector<size_t>{0, 1, 1, 1, 1}));
}

DataParallelOptions ring_all_reduce(const Cluster& cluster, size_t workers) {
  DataParallelOptions options;
  options.aggregation = Aggregation::kAllReduce;
  options.algorithm = CollectiveAlgorithm::kRing;
  auto gpus = of_kind(cluster, DeviceKind::kGpu);
  options.replicas.assign(gpus.begin(), gpus.begin() + static_cast<long>(workers));
  return options;
}

// A sync step waits for the slowest replica: one worker at half speed makes the step take its
// compute time, and the others' wait shows as straggler loss = slowest - mean.
TEST(SyncDataParallel, OneWorkerSlowedTwofoldSetsTheStepAndShowsAsStragglerLoss) {
  const size_t workers = 4;
  OpGraph graph = chain(2, 1e12, 1e3);  // compute-bound: 3 x 2e12 / 1e13 = 0.6 s per step
  Cluster even = star(workers, 1, kFastLink);
  Cluster slow = even;
  auto gpus = of_kind(slow, DeviceKind::kGpu);
  slow.devices()[gpus[2]].speed_factor = 0.5;
  Outcome fast = simulate(graph, even, ring_all_reduce(even, workers));
  Outcome straggled = simulate(graph, slow, ring_all_reduce(slow, workers));
  const double compute = 3 * 2 * 1e12 / kGpuPeak;
  EXPECT_NEAR(straggled.run.metrics.step_time_seconds - fast.run.metrics.step_time_seconds, compute, compute * 0.01);
  // Backward ends: three at ~compute, one at ~2 x compute: max - mean = 2c - 1.25c = 0.75c.
  EXPECT_NEAR(straggled.dp.straggler_loss_seconds, 0.75 * compute, compute * 0.01);
  EXPECT_NEAR(fast.dp.straggler_loss_seconds, 0, 1e-9);
}

// GPUs of one model differ in speed (a measured spread, sim/cluster/device_spread.h): a sync step
// runs its GEMMs at the expected slowest of its replicas' pace, E[max of 4] / E[one] for a
// log-normal spread of sigma 0.1 (about 1.10); an async worker at its own (1), and so does every
// GPU with the spread turned off. The chain is all GEMMs: 0.6 s of compute a step, so the step
// grows by (factor - 1) x 0.6 s.
TEST(SyncDataParallel, AMeasuredSpreadRunsEveryGemmAtTheExpectedSlowestReplicasPace) {
  const size_t workers = 4;
  OpGraph graph = chain(2, 1e12, 1e3);
  Cluster cluster = star(workers, 1, kFastLink);
  for (DeviceId id : of_kind(cluster, DeviceKind::kGpu)) cluster.devices()[id].spec.gemm_time_spread = std::make_shared<const GemmTimeSpread>(GemmTimeSpread{0.1, "test"});
  auto plan_with = [&](SyncMode mode, bool spread) {
    RunOptions run;
    run.gpu_spread = spread;
    DataParallelOptions options = ring_all_reduce(cluster, workers);
    options.mode = mode;
    return build_data_parallel_plan(graph, cluster, run, options, "dp", nullptr);
  };
  const double factor = expected_slowest_of(0.1, 4);
  EXPECT_NEAR(factor, 1.10, 0.01);
  const ExecutionPlan measured = plan_with(SyncMode::kSync, true);
  const ExecutionPlan alike = plan_with(SyncMode::kSync, false);
  EXPECT_EQ(measured.lockstep_gemm_factor, factor);
  EXPECT_EQ(alike.lockstep_gemm_factor, 1.0);
  EXPECT_EQ(plan_with(SyncMode::kAsync, true).lockstep_gemm_factor, 1.0);
  EXPECT_EQ(measured.lockstep_gpus, 4);
  // Two replicas as two streams of one GPU (`shares_compute_with`) are one GPU: nobody to wait for.
  Cluster streams = star(2, 1, kFastLink);
  const std::vector<DeviceId> stream_gpus = of_kind(streams, DeviceKind::kGpu);
  for (DeviceId id : stream_gpus) streams.devices()[id].spec.gemm_time_spread = std::make_shared<const GemmTimeSpread>(GemmTimeSpread{0.1, "test"});
  streams.devices()[stream_gpus[1]].shares_compute_with = stream_gpus[0];
  const ExecutionPlan one_gpu =
      build_data_parallel_plan(graph, streams, RunOptions{}, ring_all_reduce(streams, 2), "dp", nullptr);
  EXPECT_EQ(one_gpu.lockstep_gemm_factor, 1.0);
  EXPECT_EQ(one_gpu.lockstep_gpus, 1);
  const double compute = 3 * 2 * 1e12 / kGpuPeak;
  EXPECT_NEAR(estimate_step(measured, cluster).step_seconds - estimate_step(alike, cluster).step_seconds,
              (factor - 1) * compute, 1e-6 * compute);
  // Only GEMMs and convolutions follow the SM clock: an elementwise kernel costs what it did.
  Task elementwise;
  elementwise.kind = TaskKind::kCompute;
  elementwise.op_kind = OpKind::kElementwise;
  elementwise.memory_bytes = 1e9;
  const ClusterDevice& gpu = cluster.device(of_kind(cluster, DeviceKind::kGpu).front());
  EXPECT_EQ(compute_seconds(elementwise, Precision::kFp32, MemoryFormat::kNchw, gpu, factor),
            compute_seconds(elementwise, Precision::kFp32, MemoryFormat::kNchw, gpu, 1.0));
}

// Async workers never wait: with one of N workers at half speed, throughput stays near
// (N - 0.5) / N of N full-speed workers.
TEST(AsyncDataParallel, ThroughputWithOneSlowWorkerStaysNearNMinusHalfOverN) {
  const size_t workers = 4;
  OpGraph graph = chain(2, 1e11, 1e3);
  Cluster even = star(workers, 1, kFastLink);
  Cluster slow = even;
  slow.devices()[of_kind(slow, DeviceKind::kGpu)[1]].speed_factor = 0.5;
  DataParallelOptions options = parameter_server(even, workers, 1);
  options.mode = SyncMode::kAsync;
  double ideal = simulate(graph, even, options, 20).dp.samples_per_second;
  double with_straggler = simulate(graph, slow, options, 20).dp.samples_per_second;
  const double n = static_cast<double>(workers);
  EXPECT_NEAR(with_straggler / ideal, (n - 0.5) / n, 0.02);
  // The same straggler costs a synchronous run half its throughput.
  DataParallelOptions sync = options;
  sync.mode = SyncMode::kSync;
  double sync_ratio = simulate(graph, slow, sync, 5).dp.samples_per_second / simulate(graph, even, sync, 5).dp.samples_per_second;
  EXPECT_LT(sync_ratio, 0.55);
}

// N identical async workers: between a worker's pull and its own update the N - 1 others each
// apply one update, so staleness averages N - 1.
TEST(AsyncDataParallel, StalenessOfIdenticalWorkersAveragesNMinusOne) {
  for (size_t workers : {2, 4, 8}) {
    OpGraph graph = chain(2, 1e11, 1e3);
    Cluster cluster = star(workers, 1, kFastLink);
    DataParallelOptions options = parameter_server(cluster, workers, 1);
    options.mode = SyncMode::kAsync;
    Outcome outcome = simulate(graph, cluster, options, 30, /*jitter=*/0.05);
    EXPECT_NEAR(outcome.dp.staleness.mean, static_cast<double>(workers - 1), 0.15 * static_cast<double>(workers))
        << workers << " workers";
    EXPECT_LE(outcome.dp.staleness.max, 2.0 * static_cast<double>(workers));
  }
}

// Bucketed all-reduce overlapping with backward hides communication: the step is shorter than
// compute + all-reduce; without overlap it is exactly compute + all-reduce.
/// 4 layers of 2e11 FLOPs and 25e6 fp32 parameters each on 4 GPUs joined in a ring of 5e9 B/s
/// links (NCCL's two channels run it both ways: 1e10 B/s in all), one layer per all-reduce bucket.
struct FourLayersOnARing {
  static constexpr size_t workers = 4, layers = 4;
  static constexpr double flops = 2e11, parameters = 25e6;
  OpGraph graph = chain(layers, flops, parameters);
  Cluster cluster = ring_of_gpus();
  DataParallelOptions options = bucket_per_layer(cluster);

  static Cluster ring_of_gpus() {
    Cluster cluster = testing::gpus(workers, testing::round_gpu(kGpuPeak, kGpuMemory));
    for (size_t i = 0; i < workers; ++i) cluster.add_link(i, (i + 1) % workers, testing::round_link(5e9, kLatency));
    return cluster;
  }
  static DataParallelOptions bucket_per_layer(const Cluster& cluster) {
    DataParallelOptions options = ring_all_reduce(cluster, workers);
    options.replicas = {0, 1, 2, 3};
    options.bucket_bytes = 4 * parameters;  // one layer per bucket
    return options;
  }
};

TEST(SyncDataParallel, BucketsOverlapAllReduceWithBackwardAndWithoutOverlapItAdds) {
  FourLayersOnARing setup;
  const size_t layers = setup.layers;
  const double flops = setup.flops, parameters = setup.parameters;
  const OpGraph& graph = setup.graph;
  const Cluster& cluster = setup.cluster;
  DataParallelOptions& options = setup.options;
  const double compute = layers * 3 * flops / kGpuPeak;
  const double bucket = 4 * parameters;
  const double all_reduce = layers * allreduce_estimate_seconds(CollectiveAlgorithm::kRing, options.replicas, bucket, cluster);
  options.overlap = false;
  double serial = simulate(graph, cluster, options).run.metrics.step_time_seconds;
  EXPECT_NEAR(serial, compute + all_reduce, (compute + all_reduce) * 0.01);
  options.overlap = true;
  double overlapped = simulate(graph, cluster, options).run.metrics.step_time_seconds;
  EXPECT_LT(overlapped, 0.9 * (compute + all_reduce));
  EXPECT_GE(overlapped, std::max(compute, all_reduce));
}

// One communication stream runs a step's bucket all-reduces one after another; with c of them
// in flight (Caffe2's Gloo ops ran 4, "concurrent_collectives") the k-th waits for the (k-c)-th.
// Without overlap, on the analytical tier (no link sharing): compute + 4 T + u serially, + 2 T +
// 2 u with two in flight, + T + 4 u with four (or more), T one bucket's ring all-reduce and u one
// layer's update, the last wave's updates running one after another on each GPU.
TEST(SyncDataParallel, ConcurrentCollectivesLetTheKthWaitForTheKMinusCth) {
  FourLayersOnARing ring;
  DataParallelOptions& options = ring.options;
  options.overlap = false;
  const double compute = ring.layers * 3 * ring.flops / kGpuPeak;
  const double bucket = allreduce_estimate_seconds(CollectiveAlgorithm::kRing, options.replicas, 4 * ring.parameters, ring.cluster);
  RunOptions run;
  for (const auto& [concurrent, waves] : std::vector<std::pair<int64_t, double>>{{1, 4}, {2, 2}, {4, 1}, {8, 1}}) {
    options.communication.concurrent_collectives = concurrent;
    const ExecutionPlan plan = build_data_parallel_plan(ring.graph, ring.cluster, run, options, "dp", nullptr);
    size_t collectives = 0;
    for (const Task& task : plan.tasks) collectives += task.kind == TaskKind::kCollective ? 1 : 0;
    ASSERT_EQ(collectives, ring.layers);
    const AnalyticalStepEstimate estimate = estimate_step(plan, ring.cluster);
    double update = 0;
    for (size_t i = 0; i < plan.tasks.size(); ++i) {
      if (plan.tasks[i].phase == Phase::kOptimizer) {
        update = estimate.timeline.tasks[i].end_seconds - estimate.timeline.tasks[i].start_seconds;
      }
    }
    ASSERT_GT(update, 0);
    const double expected = compute + waves * bucket + static_cast<double>(ring.layers) / waves * update;
    EXPECT_NEAR(estimate.step_seconds, expected, expected * 1e-9) << concurrent;
  }
}

// TensorFlow 1.x all-reduces each replicated variable on its own (tensorflow/benchmarks fd87986,
// tf_cnn_benchmarks' variable_mgr.py: one nccl.all_sum per variable). Under "tensorflow-1" a step
// of the default MLP (784-1024-1024-10: (785 + 1025) x 1024 + 1025 x 10 = 1,863,690 fp32
// parameters, 7.45 MB) runs one all-reduce per dense op, 3; PyTorch DDP's 25 MiB bucket holds all
// three, 1; a scenario's bucket_bytes keeps its meaning under either.
TEST(SyncDataParallel, TensorFlowOneReducesEachOpsGradientsOnItsOwn) {
  auto all_reduces = [](const std::string& framework, const std::string& bucket) {
    const Scenario scenario = testing::scenario_from_text(
        R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_p100"},
            "strategy": {"data_parallel": {"replicas": 2, "aggregation": "allreduce", "framework": ")" +
        framework + "\"" + bucket + R"(}}, "run": {"batch_size": 64, "steps": 1}})");
    size_t count = 0;
    for (const Task& task : plan_scenario(scenario).plan.tasks) count += task.kind == TaskKind::kCollective ? 1 : 0;
    return count;
  };
  EXPECT_EQ(all_reduces("tensorflow-1", ""), 3u);
  EXPECT_EQ(all_reduces("pytorch-ddp", ""), 1u);
  EXPECT_EQ(all_reduces("tensorflow-1", R"(, "bucket_bytes": 26214400)"), 1u);
  EXPECT_EQ(all_reduces("pytorch-ddp", R"(, "bucket_bytes": 1)"), 3u);
}

// A data-parallel all-reduce moves the gradients at their element size: the default MLP's
// 1,863,690 parameters in fp16 are 3,727,380 bytes in one DDP bucket; "fp32_gradients" (PyTorch
// FSDP's reduce_dtype=float32, Megatron's bf16 runs) doubles them to 7,454,760, and each replica
// holds 4 bytes of gradient per parameter instead of 2.
TEST(SyncDataParallel, Fp32GradientsAllReduceFourBytesPerParameter) {
  auto plan_of = [](const std::string& fp32) {
    const Scenario scenario = testing::scenario_from_text(
        R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_p100"},
            "strategy": {"data_parallel": {"replicas": 2, "aggregation": "allreduce", "framework": "pytorch-ddp"}},
            "run": {"batch_size": 64, "steps": 1, "precision": "fp16", "optimizer": "adam")" + fp32 + "}}");
    return plan_scenario(scenario).plan;
  };
  const double parameters = (785 + 1025) * 1024 + 1025 * 10;
  for (const std::string& fp32 : {std::string(), std::string(R"(, "fp32_gradients": true)")}) {
    const ExecutionPlan plan = plan_of(fp32);
    const double element = fp32.empty() ? 2 : 4;
    std::vector<double> bytes;
    for (const Task& task : plan.tasks) {
      if (task.kind == TaskKind::kCollective) bytes.push_back(task.bytes);
    }
    EXPECT_EQ(bytes, std::vector<double>{element * parameters}) << fp32;
    double gradients = 0;
    for (const StaticMemory& memory : plan.static_memory) gradients = std::max(gradients, memory.gradient_bytes);
    EXPECT_DOUBLE_EQ(gradients, element * parameters) << fp32;
  }
}

// Horovod fuses gradients while the fused size stays within its threshold; PyTorch DDP closes a
// bucket once it holds the cap. The default MLP's gradients come in backward order as fc3 41,000
// B ((1024 + 1) x 10 x 4), fc2 4,198,400 B and fc1 3,215,360 B. Within 5,000,000 B Horovod fuses
// fc3 + fc2 (4,239,400) and reduces fc1 alone: 2; DDP's bucket is still under its cap after fc2
// and takes fc1 too: 1. Within 1,000,000 B every gradient is alone under Horovod (fc2 and fc1
// are larger than it): 3. Horovod's default, 128 MiB, holds all three: 1. The 3D planner
// (`parallelism`, data 2) groups alike.
TEST(SyncDataParallel, HorovodFusesGradientsWithinItsThreshold) {
  auto all_reduces = [](const std::string& strategy) {
    const Scenario scenario = testing::scenario_from_text(
        R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_p100"}, "strategy": )" + strategy +
        R"(, "run": {"batch_size": 64, "steps": 1}})");
    size_t count = 0;
    for (const Task& task : plan_scenario(scenario).plan.tasks) count += task.kind == TaskKind::kCollective ? 1 : 0;
    return count;
  };
  auto data_parallel = [&](const std::string& framework, const std::string& bucket) {
    return all_reduces(R"({"data_parallel": {"replicas": 2, "aggregation": "allreduce", "framework": ")" + framework +
                       "\"" + bucket + "}}");
  };
  auto parallelism = [&](const std::string& framework, const std::string& bucket) {
    return all_reduces(R"({"parallelism": {"data": 2, "framework": ")" + framework + "\"" + bucket + "}}");
  };
  EXPECT_EQ(data_parallel("horovod", R"(, "bucket_bytes": 5000000)"), 2u);
  EXPECT_EQ(data_parallel("pytorch-ddp", R"(, "bucket_bytes": 5000000)"), 1u);
  EXPECT_EQ(data_parallel("horovod", R"(, "bucket_bytes": 1000000)"), 3u);
  EXPECT_EQ(data_parallel("horovod", ""), 1u);
  EXPECT_EQ(parallelism("horovod", R"(, "bucket_bytes": 5000000)"), 2u);
  EXPECT_EQ(parallelism("pytorch-ddp", R"(, "bucket_bytes": 5000000)"), 1u);
  EXPECT_EQ(parallelism("horovod", R"(, "bucket_bytes": 1000000)"), 3u);
}

TEST(DataParallel, JitterIsSeededAndHasMeanOne) {
  EXPECT_EQ(jitter_factor(7, 2, 3, 0.2), jitter_factor(7, 2, 3, 0.2));
  EXPECT_NE(jitter_factor(7, 2, 3, 0.2), jitter_factor(8, 2, 3, 0.2));
  EXPECT_EQ(jitter_factor(7, 2, 3, 0.0), 1.0);
  double sum = 0;
  for (int64_t step = 0; step < 20000; ++step) sum += jitter_factor(1, 0, step, 0.3);
  EXPECT_NEAR(sum / 20000, 1.0, 0.01);
}

}  // namespace
}  // namespace data_parallel_test
}  // namespace placesim
