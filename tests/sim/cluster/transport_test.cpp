// Transports against hand-derived times: a message stream's rate cap against its share of a
// server's link, the wire efficiency, the host CPU's copies, collectives taking a share of the
// GPUs they overlap, the framework's choice of transport, and plan files keeping them.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/analytical/analytical_engine.h"
#include "sim/cluster/transport_json.h"
#include "sim/core/input_error.h"
#include "sim/engine/simgrid_engine.h"
#include "sim/plan/plan_json.h"
#include "sim/planner/data_parallel_builder.h"
#include "sim/planner/parallel_3d_builder.h"
#include "sim/planner/framework_transports.h"
#include "sim/report/bottleneck.h"
#include "sim/report/metrics.h"
#include "tests/support/scenario_text.h"
#include "tests/support/test_support.h"

namespace placesim {
namespace {

using testing::add;
using testing::compute_task;
using testing::empty_plan;
using testing::round_gpu;
using testing::round_link;
using testing::transfer_task;

constexpr double kRelative = 1e-6;

Timeline simulate(const ExecutionPlan& plan, const Cluster& cluster) {
  return make_simgrid_engine()->simulate(plan, cluster);
}

/// Machine 0 holds a CPU (the parameter server); machines 1..workers each a CPU and a GPU;
/// every device hangs off one switch by its own link. The server's link has `server_bandwidth`,
/// the others 1e12 B/s; latencies 0. CPUs copy memory at `cpu_memory_bandwidth`.
Cluster machines(size_t workers, double server_bandwidth, double cpu_memory_bandwidth = 1e13,
                 const std::string& link_type = "eth_test", double link_latency_seconds = 0) {
  Cluster cluster;
  cluster.name = "machines";
  DeviceSpec cpu = round_gpu(1e13, cpu_memory_bandwidth);
  cpu.kind = DeviceKind::kCpu;
  cpu.id = "test-cpu";
  VertexId hub = cluster.add_switch("switch");
  auto add_device = [&](DeviceKind kind, int node, const DeviceSpec& spec, double bandwidth) {
    ClusterDevice device;
    device.name = DeviceName{"worker", 0, node, kind, 0};
    device.node = node;
    device.spec = spec;
    DeviceId id = cluster.add_device(device, "task:" + std::to_string(node) + "/" + to_string(kind) + ":0");
    cluster.add_link(cluster.device(id).vertex, hub, round_link(bandwidth, link_latency_seconds, link_type));
    return id;
  };
  add_device(DeviceKind::kCpu, 0, cpu, server_bandwidth);
  for (size_t w = 1; w <= workers; ++w) {
    add_device(DeviceKind::kCpu, static_cast<int>(w), cpu, 1e12);
    add_device(DeviceKind::kGpu, static_cast<int>(w), round_gpu(), 1e12);
  }
  return cluster;
}

DeviceId gpu_of_machine(size_t machine) { return 2 * machine; }  // CPU 0; then CPU, GPU per machine

Transport capped(double stream_bytes_per_second) {
  Transport transport;
  transport.id = "capped";
  transport.stream_bytes_per_second = stream_bytes_per_second;
  return transport;
}

// N workers push B bytes each to one server at once. Each stream gets min(cap, link / N):
// with 2 workers over a 1e9 B/s link, 5e8 each > the 4e8 cap: stream-bound, B / 4e8;
// with 4 workers, 2.5e8 each < 4e8: link-bound, 4 B / 1e9.
TEST(Transport, AMessageStreamIsCappedUntilTheServersLinkIsTheBottleneck) {
  const double bytes = 1e8, cap = 4e8, link = 1e9;
  for (size_t workers : {2u, 4u}) {
    Cluster cluster = machines(workers, link);
    ExecutionPlan plan = empty_plan(cluster);
    plan.transports.push_back(capped(cap));
    for (size_t w = 1; w <= workers; ++w) {
      Task push = transfer_task(gpu_of_machine(w), 0, bytes);
      push.transport = 0;
      add(plan, push);
    }
    const double expected = workers == 2 ? bytes / cap : static_cast<double>(workers) * bytes / link;  // 0.25 s, 0.4 s
    EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative) << workers << " workers";
    EXPECT_NEAR(estimate_step(plan, cluster).makespan_seconds, bytes / std::min(cap, link), kRelative)
        << "the analytical tier times each transfer alone";
  }
}

// A wire efficiency of 0.5 puts twice the payload on the link: 1e8 B over 1e9 B/s in 0.2 s.
TEST(Transport, WireEfficiencyStretchesTheTransfer) {
  Cluster cluster = machines(1, 1e9);
  ExecutionPlan plan = empty_plan(cluster);
  Transport framed;
  framed.id = "framed";
  framed.wire_efficiency = 0.5;
  plan.transports.push_back(framed);
  Task push = transfer_task(gpu_of_machine(1), 0, 1e8);
  push.transport = 0;
  add(plan, push);
  EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), 1e8 / 0.5 / 1e9, kRelative);
  EXPECT_NEAR(estimate_step(plan, cluster).makespan_seconds, 1e8 / 0.5 / 1e9, kRelative);
}

// NCCL over TCP sockets reaches 0.53 of the links' rate (sim/cluster/transport.cpp: the median of
// four nccl-tests bus bandwidths over TCP). A ring all-reduce of S = 1e9 B between two GPUs on one
// 1e9 B/s link, latency 0: each GPU sends S/2 twice, 2 (2-1)/2 x S / B = 1 s at the link's rate,
// 1 / 0.53 = 1.8868 s over nccl_socket, on both engines; a transfer likewise 1e8 / (0.53 x 1e9).
// A scenario's transport object may set the share back to 1 (`"link_rate_share": 1`). The
// all-reduce also pays NCCL's own latency (nccl_cost_model.h): a Simple ring in one machine over
// PCIe (a "test" link is not NVLink), 8.4 us + 2 (2 - 1) steps x 5.7 us = 19.8 us.
TEST(Transport, NcclOverSocketsReachesItsMeasuredShareOfTheLinksRate) {
  Cluster cluster = testing::gpus(2, round_gpu(1e12));
  cluster.add_link(cluster.device(0).vertex, cluster.device(1).vertex, round_link(1e9, 0));
  const Transport socket = *find_transport("nccl_socket");
  EXPECT_DOUBLE_EQ(socket.link_rate_share, 0.53);
  EXPECT_DOUBLE_EQ(socket.link_efficiency(), 0.53);
  for (double share : {0.53, 1.0}) {
    ExecutionPlan plan = empty_plan(cluster);
    plan.collective_fidelity = CollectiveFidelity::kPerPhase;
    Transport transport = read_transport_json(JsonReader(
        Json{{"id", "nccl_socket"}, {"link_rate_share", share}, {"gpu_compute_share", 0}}, "scenario.json"));
    EXPECT_DOUBLE_EQ(transport.link_rate_share, share);
    plan.transports.push_back(transport);
    Task allreduce;
    allreduce.kind = TaskKind::kCollective;
    allreduce.phase = Phase::kCollective;
    allreduce.algorithm = CollectiveAlgorithm::kRing;
    allreduce.group = {0, 1};
    allreduce.bytes = 1e9;
    allreduce.transport = 0;
    TaskId reduced = add(plan, allreduce);
    Task send = transfer_task(0, 1, 1e8);
    send.transport = 0;
    add(plan, send, {reduced});
    const double nccl_latency = (8.4 + 2 * 5.7) * 1e-6;
    const double expected = 1.0 / share + 0.1 / share + nccl_latency;
    EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative) << share;
    EXPECT_NEAR(estimate_step(plan, cluster).makespan_seconds, expected, expected * kRelative) << share;
  }
  // Out of range: a share is in (0, 1].
  EXPECT_THROW(read_transport_json(JsonReader(Json{{"id", "nccl_socket"}, {"link_rate_share", 0}}, "scenario.json")),
               InputError);
}

// A pipeline's stages on two DGX-1s joined by 25 GbE TCP (stages outermost: stage 0 on machine
// 0's 8 GPUs, stage 1 on machine 1's): under PyTorch DDP the activations and gradients between the
// stages go over NCCL's socket transport, as its collectives between those GPUs would, so the
// analytical tier times each at latency + bytes / (0.53 x the route's bandwidth); under "links"
// (the default) at the route's rate, with no transport.
TEST(Transport, StageTransfersAcrossMachinesTakeTheFrameworksTransport) {
  for (const std::string framework : {"links", "pytorch-ddp"}) {
    SCOPED_TRACE(framework);
    const Scenario scenario = testing::scenario_from_text(
        R"({"model": {"zoo": "mlp"}, "cluster": {"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "eth_25g"}},
            "strategy": {"parallelism": {"pipeline": 2, "data": 8, "micro_batches": 2, "device_order": "tp-cp-dp-pp",
                                         "framework": ")" + framework + R"("}},
            "simulation": {"tier": "analytical"}, "run": {"batch_size": 64}})");
    const Strategy& strategy = scenario.strategies.front();
    const Cluster& cluster = scenario.cluster_for(strategy);
    const ExecutionPlan plan =
        build_parallel_3d_plan(scenario.graph, cluster, scenario.run, *strategy.parallelism, "pp", nullptr);
    const Timeline timeline = estimate_step(plan, cluster).timeline;
    size_t across = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind != TaskKind::kTransfer || task.source == task.device) continue;
      if (cluster.device(task.source).node == cluster.device(task.device).node) {
        EXPECT_EQ(task.transport, -1) << task.name;
        continue;
      }
      ++across;
      const double share = framework == "links" ? 1.0 : 0.53;
      if (framework == "links") {
        EXPECT_EQ(task.transport, -1) << task.name;
      } else {
        ASSERT_GE(task.transport, 0) << task.name;
        EXPECT_EQ(plan.transports.at(static_cast<size_t>(task.transport)).id, "nccl_socket");
      }
      const double expected = cluster.route_latency_seconds(task.source, task.device) +
                              task.bytes / (share * cluster.route_bandwidth_bytes_per_second(task.source, task.device));
      EXPECT_NEAR(timeline.tasks[task.id].duration(), expected, expected * kRelative) << task.name;
    }
    EXPECT_GT(across, 0u);
  }
}

// A collective with a compute share s in flight on a GPU: a compute task of t seconds that
// starts meanwhile takes t / (1 - s). Ring all-reduce of 2 GPUs over a 1e9 B/s link moves
// 2 (n-1)/n x 1e10 = 1e10 B per GPU: 10 s, longer than the compute; t = 1 s, s = 0.2: 1.25 s.
TEST(Transport, OverlappedCollectiveSlowsComputeByItsShare) {
  Cluster cluster = testing::gpus(2, round_gpu(1e12));
  cluster.add_link(cluster.device(0).vertex, cluster.device(1).vertex, round_link(1e9, 0));
  for (bool with_share : {false, true}) {
    ExecutionPlan plan = empty_plan(cluster);
    Transport nccl;
    nccl.id = "nccl-test";
    nccl.gpu_compute_share = 0.2;
    plan.transports.push_back(nccl);
    Task allreduce;
    allreduce.kind = TaskKind::kCollective;
    allreduce.phase = Phase::kCollective;
    allreduce.group = {0, 1};
    allreduce.bytes = 1e10;
    allreduce.transport = with_share ? 0 : -1;
    add(plan, allreduce);
    TaskId compute = add(plan, compute_task(0, 1e12));
    const double expected = with_share ? 1.0 / (1.0 - 0.2) : 1.0;
    EXPECT_NEAR(simulate(plan, cluster).tasks[compute].duration(), expected, expected * kRelative);
    EXPECT_NEAR(estimate_step(plan, cluster).timeline.tasks[compute].duration(), expected, expected * kRelative);
  }
}

// The server's CPU deserialises every worker's message in turn (one copy: 2 B bytes of memory
// traffic at 1e10 B/s each): N workers' 1e8-byte pushes arriving together end at
// transfer + N x 2e8 / 1e10 = 0.1 s + N x 20 ms.
TEST(Transport, TheServersCpuDeserialisesEachWorkersMessageInTurn) {
  const double bytes = 1e8, cpu_memory = 1e10;
  for (size_t workers : {1u, 4u}) {
    Cluster cluster = machines(workers, /*server link*/ 1e9 * static_cast<double>(workers), cpu_memory);
    ExecutionPlan plan = empty_plan(cluster);
    for (size_t w = 1; w <= workers; ++w) {
      TaskId push = add(plan, transfer_task(gpu_of_machine(w), 0, bytes));
      add(plan, compute_task(0, 0, 2 * bytes, OpKind::kOther), {push});
    }
    const double expected = bytes / 1e9 + static_cast<double>(workers) * 2 * bytes / cpu_memory;
    EXPECT_NEAR(simulate(plan, cluster).makespan_seconds(), expected, expected * kRelative) << workers;
  }
}

OpGraph one_dense_layer(double parameters) {
  OpGraph graph;
  Op op = testing::matmul_op("dense", 1e9, parameters, 1e3);
  graph.add_op(op);
  return graph;
}

// TensorFlow 1.x between machines: each push is serialise (worker's CPU) -> gRPC transfer ->
// deserialise (server's CPU), each host task copying the variable once (2 x bytes of traffic).
TEST(Transport, TensorFlowParameterServerMessagesAreSerialisedOnBothHosts) {
  const double parameters = 1e6, bytes = 4 * parameters;
  Cluster cluster = machines(2, 1e9);
  DataParallelOptions options;
  options.aggregation = Aggregation::kParameterServer;
  options.replicas = {gpu_of_machine(1), gpu_of_machine(2)};
  options.parameter_servers = {0};
  options.communication.framework = Framework::kTensorFlow1;
  RunOptions run;
  ExecutionPlan plan = build_data_parallel_plan(one_dense_layer(parameters), cluster, run, options, "tf1", nullptr);
  ASSERT_EQ(plan.transports.size(), 1u);
  EXPECT_EQ(plan.transports[0].id, "grpc_tcp");
  size_t pushes = 0;
  for (const Task& task : plan.tasks) {
    if (task.kind != TaskKind::kTransfer || task.phase != Phase::kPush) continue;
    ++pushes;
    EXPECT_EQ(task.transport, 0);
    ASSERT_EQ(task.deps.size(), 1u);
    const Task& serialise = plan.tasks[task.deps[0]];
    EXPECT_EQ(serialise.device, task.source - 1) << "the worker machine's CPU";
    EXPECT_DOUBLE_EQ(serialise.memory_bytes, 2 * bytes);
    bool deserialised = false;
    for (const Task& next : plan.tasks) {
      if (next.kind == TaskKind::kCompute && next.device == 0 && next.deps == std::vector<TaskId>{task.id}) {
        EXPECT_DOUBLE_EQ(next.memory_bytes, 2 * bytes);
        deserialised = true;
      }
    }
    EXPECT_TRUE(deserialised);
  }
  EXPECT_EQ(pushes, 2u);

  options.communication.framework = Framework::kLinksOnly;
  ExecutionPlan links = build_data_parallel_plan(one_dense_layer(parameters), cluster, run, options, "links", nullptr);
  EXPECT_TRUE(links.transports.empty());
  EXPECT_LT(links.tasks.size(), plan.tasks.size()) << "no host tasks without a framework";
}

TEST(Transport, FrameworksPickTheirTransports) {
  Cluster ethernet = machines(2, 1e9);
  Cluster infiniband = machines(2, 1e9, 1e13, "ib_edr");
  CommunicationOptions tf1{Framework::kTensorFlow1, std::nullopt};
  CommunicationOptions horovod{Framework::kHorovod, std::nullopt};
  CommunicationOptions links{};
  const DeviceId worker = gpu_of_machine(1), same_machine_cpu = 1;
  EXPECT_FALSE(message_transport(tf1, ethernet, worker, same_machine_cpu)) << "in-process copies";
  EXPECT_EQ(message_transport(tf1, ethernet, worker, 0)->id, "grpc_tcp");
  EXPECT_FALSE(message_transport(links, ethernet, worker, 0));
  EXPECT_EQ(message_transport(horovod, infiniband, worker, 0)->id, "rdma_verbs");
  const std::vector<DeviceId> across = {gpu_of_machine(1), gpu_of_machine(2)};
  EXPECT_EQ(collective_transport(horovod, ethernet, across)->id, "nccl_socket");
  EXPECT_EQ(collective_transport(horovod, infiniband, across)->id, "nccl_ib");
  EXPECT_EQ(collective_transport(tf1, ethernet, across)->id, "grpc_tcp");
  CommunicationOptions forced{Framework::kHorovod, find_transport("tcp")};
  EXPECT_EQ(collective_transport(forced, infiniband, across)->id, "tcp");
  for (const Transport& transport : bundled_transports()) {  // the collectives NCCL runs
    EXPECT_EQ(is_nccl_transport(transport), transport.id.rfind("nccl", 0) == 0) << transport.id;
  }
  EXPECT_FALSE(is_nccl_transport(*find_transport("tcp")));
}

// Eight machines, one GPU each, on equal InfiniBand links with latency: halving-doubling moves
// the ring's bytes in 2 log2 8 = 6 latencies instead of 14, so `auto` takes it when it weighs
// every algorithm ("links", or a framework forced onto TCP, as MPI/Gloo would run it). Under an
// NCCL transport it weighs NCCL's algorithms only, and a 400 MB bucket goes to the ring.
TEST(Transport, AnNcclAllReducesAutoAlgorithmIsOneNcclHas) {
  Cluster cluster = machines(8, 1e10, 1e13, "ib_edr", 5e-6);
  DataParallelOptions options;
  for (size_t machine = 1; machine <= 8; ++machine) options.replicas.push_back(gpu_of_machine(machine));
  RunOptions run;
  auto picked = [&](const CommunicationOptions& communication) {
    options.communication = communication;
    std::vector<std::string> notes;
    build_data_parallel_plan(one_dense_layer(1e8), cluster, run, options, "dp", &notes);
    for (const std::string& note : notes) {
      const size_t at = note.find("auto picked ");
      if (at != std::string::npos) return note.substr(at + 12, note.find(' ', at + 12) - at - 12);
    }
    return std::string("none");
  };
  EXPECT_EQ(picked({Framework::kLinksOnly, std::nullopt}), "halving_doubling");
  EXPECT_EQ(picked({Framework::kPyTorchDdp, std::nullopt}), "ring");
  EXPECT_EQ(picked({Framework::kHorovod, std::nullopt}), "ring");
  EXPECT_EQ(picked({Framework::kHorovod, find_transport("tcp")}), "halving_doubling");
}

// NCCL runs 2 SMs per network card for collectives across machines (NVIDIA/nccl#689: "a PCI
// system with a single NIC ... 2 SMs", "DGX with 8 NICs ... 16 SMs"): on two DGX A100 (8
// ConnectX-6 each, 108 SMs) the share is 16/108, on two DGX-1 V100 (4 NICs, 80 SMs) 8/80; inside
// one machine NCCL's 0.15; a cluster that does not know its cards keeps nccl_ib's 0.02.
TEST(Transport, NcclAcrossMachinesTakesTwoSmsPerNetworkCard) {
  auto share = [](const std::string& cluster_text, size_t gpus) {
    const Scenario scenario = testing::scenario_from_text(R"({"model": {"zoo": "mlp"}, "cluster": )" + cluster_text +
                                                          R"(, "strategy": {"parallelism": {"data": )" + std::to_string(gpus) +
                                                          R"(, "framework": "pytorch-ddp"}}, "run": {"batch_size": 64}})");
    std::vector<DeviceId> group;
    for (DeviceId d = 0; d < scenario.cluster.devices().size() && group.size() < gpus; ++d) {
      if (scenario.cluster.device(d).name.kind == DeviceKind::kGpu) group.push_back(d);
    }
    return collective_transport({Framework::kPyTorchDdp, std::nullopt}, scenario.cluster, group)->gpu_compute_share;
  };
  EXPECT_DOUBLE_EQ(share(R"({"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}})", 16), 2.0 * 8 / 108);
  EXPECT_DOUBLE_EQ(share(R"({"template": "dgx1_v100", "nodes": 2, "fabric": {"link": "ib_edr"}})", 16), 2.0 * 4 / 80);
  EXPECT_DOUBLE_EQ(share(R"({"template": "dgx_a100", "nodes": 2, "fabric": {"link": "ib_hdr"}})", 8), 0.15);  // one machine
  Cluster unknown = machines(2, 1e10, 1e13, "ib_edr", 5e-6);
  EXPECT_DOUBLE_EQ(collective_transport({Framework::kPyTorchDdp, std::nullopt}, unknown,
                                        {gpu_of_machine(1), gpu_of_machine(2)})->gpu_compute_share,
                   0.02);
}

TEST(Transport, PlanFilesKeepTransportsAndHostCosts) {
  Cluster cluster = machines(1, 1e9);
  ExecutionPlan plan = empty_plan(cluster);
  Transport grpc = *find_transport("grpc_tcp");
  grpc.host_seconds_per_message = 3e-5;
  grpc.link_rate_share = 0.8;  // a scenario's own transport object may set it; the plan keeps it
  plan.transports.push_back(grpc);
  Task push = transfer_task(gpu_of_machine(1), 0, 1e8);
  push.transport = 0;
  TaskId sent = add(plan, push);
  Task deserialise = compute_task(0, 0, 2e8, OpKind::kOther);
  deserialise.fixed_seconds = 3e-5;
  add(plan, deserialise, {sent});
  Json written = write_plan_json(plan, cluster);
  PlanFile read = read_plan_json(JsonReader(written, "plan.json"));
  ASSERT_EQ(read.plan.transports.size(), 1u);
  EXPECT_EQ(read.plan.transports[0].id, "grpc_tcp");
  EXPECT_DOUBLE_EQ(read.plan.transports[0].stream_bytes_per_second, grpc.stream_bytes_per_second);
  EXPECT_DOUBLE_EQ(read.plan.transports[0].host_seconds_per_message, 3e-5);
  EXPECT_DOUBLE_EQ(read.plan.transports[0].link_rate_share, 0.8);
  EXPECT_EQ(read.plan.tasks[0].transport, 0);
  EXPECT_DOUBLE_EQ(read.plan.tasks[1].fixed_seconds, 3e-5);
  EXPECT_NEAR(simulate(read.plan, read.cluster).makespan_seconds(), simulate(plan, cluster).makespan_seconds(), 1e-12);
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

OpGraph two_dense_layers(double parameters) {
  OpGraph graph;
  OpId first = graph.add_op(testing::matmul_op("dense0", 1e9, parameters, 1e3));
  OpId second = graph.add_op(testing::matmul_op("dense1", 1e9, parameters, 1e3));
  graph.add_edge(first, second);
  return graph;
}

// TensorFlow 1.x: one session.run per step, which returns when every update has run, so each
// pull of step 1 waits for the updates of both variables in step 0; without the framework a
// pull waits for its own variable's update only.
TEST(Transport, TensorFlowStepsEndWhenEveryUpdateHasRun) {
  Cluster cluster = machines(2, 1e9);
  DataParallelOptions options;
  options.aggregation = Aggregation::kParameterServer;
  options.replicas = {gpu_of_machine(1), gpu_of_machine(2)};
  options.parameter_servers = {0};
  RunOptions run;
  run.steps = 2;
  for (Framework framework : {Framework::kTensorFlow1, Framework::kLinksOnly}) {
    options.communication.framework = framework;
    ExecutionPlan plan = build_data_parallel_plan(two_dense_layers(1e6), cluster, run, options, "tf1", nullptr);
    std::vector<TaskId> step0_applies;
    for (const Task& task : plan.tasks) {
      if (task.phase == Phase::kApply && task.step == 0) step0_applies.push_back(task.id);
    }
    ASSERT_EQ(step0_applies.size(), 2u);
    size_t step1_pulls = 0;
    for (const Task& task : plan.tasks) {
      if (task.kind != TaskKind::kTransfer || task.phase != Phase::kPull || task.step != 1) continue;
      ++step1_pulls;
      // The pull's first task: the serialisation on the server (TF) or the pull itself.
      const std::vector<TaskId>& deps = framework == Framework::kTensorFlow1 ? plan.tasks[task.deps.at(0)].deps : task.deps;
      size_t waits_for = 0;
      for (TaskId apply : step0_applies) waits_for += std::count(deps.begin(), deps.end(), apply);
      EXPECT_EQ(waits_for, framework == Framework::kTensorFlow1 ? 2u : 1u) << task.name;
    }
    EXPECT_EQ(step1_pulls, 4u);  // 2 workers x 2 variables
  }
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

// A worker pushes 1e8 B to its server over the server's 1e9 B/s link (0.1 s), then the server's
// CPU copies 6e8 B at 2e9 B/s (0.3 s): makespan 0.4 s. Busy shares: PS CPU 0.3 / 0.4 = 0.75,
// PS NIC (the link into the server's machine) 1e8 / (1e9 x 0.4) = 0.25, the worker's own link
// 1e8 / (1e12 x 0.4) = 0.00025 (network), the worker's GPU 0 (compute).
TEST(Transport, TheBottleneckIsTheBusiestResourceByItsShareOfTheRun) {
  Cluster cluster = machines(1, 1e9, /*cpu memory*/ 2e9);
  ExecutionPlan plan = empty_plan(cluster);
  TaskId push = add(plan, transfer_task(gpu_of_machine(1), 0, 1e8));
  add(plan, compute_task(0, 0, 6e8, OpKind::kOther), {push});
  Timeline timeline = simulate(plan, cluster);
  ASSERT_NEAR(timeline.makespan_seconds(), 0.4, 0.4 * kRelative);
  Bottleneck bottleneck =
      find_bottleneck(plan, cluster, timeline, compute_metrics(plan, cluster, timeline), {gpu_of_machine(1)}, {0});
  ASSERT_EQ(bottleneck.loads.size(), 4u);
  EXPECT_EQ(bottleneck.loads[0].kind, "PS CPU");
  EXPECT_NEAR(bottleneck.loads[0].busy_share, 0.75, 1e-6);
  EXPECT_EQ(bottleneck.loads[1].kind, "PS NIC");
  EXPECT_EQ(bottleneck.loads[1].resource, "switch -> task:0/CPU:0");
  EXPECT_NEAR(bottleneck.loads[1].busy_share, 0.25, 1e-6);
  EXPECT_EQ(bottleneck.loads[2].kind, "network");
  EXPECT_NEAR(bottleneck.loads[2].busy_share, 1e8 / (1e12 * 0.4), 1e-9);
  EXPECT_EQ(bottleneck.loads[3].kind, "compute");
  EXPECT_EQ(bottleneck.loads[3].busy_share, 0);
  EXPECT_EQ(bottleneck_text(bottleneck).rfind("bottleneck: PS CPU, task:0/CPU:0 (75% busy); PS NIC 25%", 0), 0u)
      << bottleneck_text(bottleneck);
}

}  // namespace
}  // namespace placesim
