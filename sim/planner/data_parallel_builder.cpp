#include "sim/planner/data_parallel_builder.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>

#include "sim/plan/collective_schedule.h"
#include "sim/planner/framework_transports.h"
#include "sim/planner/lockstep_devices.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/plan_builder.h"
#include "sim/planner/step_emitter.h"

namespace placesim {
namespace {

std::string megabytes(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f MB", bytes / 1e6);
  return buffer;
}

/// The first CPU of each machine, by node, in cluster order (CPU-only ops of a replica run on its
/// machine's); one pass, where a scan per replica cost 100,000 replicas x 1,000,000 devices.
std::vector<std::optional<DeviceId>> first_cpu_by_node(const Cluster& cluster) {
  std::vector<std::optional<DeviceId>> cpus;
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) {
    const ClusterDevice& device = cluster.device(id);
    if (device.node < 0) continue;
    const size_t node = static_cast<size_t>(device.node);
    if (cpus.size() <= node) cpus.resize(node + 1);
    if (device.name.kind == DeviceKind::kCpu && !cpus[node]) cpus[node] = id;
  }
  return cpus;
}

/// A CPU of the machine holding `device` (for CPU-only ops), else the device itself.
DeviceId host_cpu_of(const Cluster& cluster, const std::vector<std::optional<DeviceId>>& cpus, DeviceId device) {
  const int node = cluster.device(device).node;
  if (node < 0 || static_cast<size_t>(node) >= cpus.size() || !cpus[static_cast<size_t>(node)]) return device;
  return *cpus[static_cast<size_t>(node)];
}

struct Bucket {
  std::vector<OpId> ops;
  double bytes = 0;
};

/// Parameter ops grouped into buckets, in the order backward finishes them (reverse topological
/// order), as PyTorch DDP and Horovod fuse gradients (joins_gradient_group: a DDP bucket closes
/// once it holds `bucket_bytes`, Horovod's stays within it; kOneBucketPerOp: every op alone).
std::vector<Bucket> make_buckets(const OpGraph& graph, const StepEmitter& emitter, const RunOptions& run,
                                 double bucket_bytes, Framework framework) {
  std::vector<Bucket> buckets;
  const auto& order = emitter.order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Op& op = graph.op(*it);
    if (!emitter.selected(*it) || op.parameter_count <= 0) continue;
    const double gradient = gradient_bytes(op, run);
    if (buckets.empty() || !joins_gradient_group(framework, buckets.back().bytes, gradient, bucket_bytes)) {
      buckets.emplace_back();
    }
    buckets.back().ops.push_back(*it);
    buckets.back().bytes += gradient;
  }
  return buckets;
}

/// How the buckets were filled, for the plan note (as make_buckets fills them).
std::string grouping_note(const DataParallelOptions& options) {
  if (options.bucket_bytes == kOneBucketPerOp) {
    return " gradient all-reduce(s), one per op with weights (TensorFlow 1.x reduces each variable on its own)";
  }
  if (options.communication.framework == Framework::kHorovod) {
    return " fused gradient all-reduce(s), each holding at most " + megabytes(options.bucket_bytes) +
           " or one larger gradient (Horovod's Tensor Fusion)";
  }
  return " gradient bucket(s), each closed once it holds " + megabytes(options.bucket_bytes);
}

}  // namespace

std::vector<size_t> shard_variables(const OpGraph& graph, size_t servers, Sharding sharding) {
  std::vector<size_t> server_of(graph.size(), 0);
  std::vector<double> load(servers, 0);
  size_t next = 0;
  for (OpId v = 0; v < graph.size(); ++v) {
    const Op& op = graph.op(v);
    if (op.parameter_count <= 0) continue;
    if (sharding == Sharding::kRoundRobin) {
      server_of[v] = next++ % servers;
    } else {
      server_of[v] = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    }
    load[server_of[v]] += op.parameter_bytes();
  }
  return server_of;
}

ExecutionPlan build_data_parallel_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                       const DataParallelOptions& options, const std::string& name,
                                       std::vector<std::string>* notes) {
  const size_t replicas = options.replicas.size();
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size * static_cast<int64_t>(replicas));
  // Synchronous replicas wait for the slowest every step; asynchronous ones each run at their own.
  if (options.mode == SyncMode::kSync) set_lockstep_devices(cluster, options.replicas, run, &plan);
  StepEmitter emitter(graph, cluster, run, &plan);
  const bool training = emitter.training();
  const bool use_ps = options.aggregation == Aggregation::kParameterServer;

  std::vector<std::function<DeviceId(OpId)>> device_of(replicas);
  const std::vector<std::optional<DeviceId>> cpus = first_cpu_by_node(cluster);
  for (size_t r = 0; r < replicas; ++r) {
    DeviceId device = options.replicas[r];
    DeviceId cpu = host_cpu_of(cluster, cpus, device);
    device_of[r] = [&graph, device, cpu](OpId v) { return graph.op(v).cpu_only ? cpu : device; };
  }

  // Static memory: every replica holds the variables; with all-reduce also gradients and the
  // optimizer state; with parameter servers the servers hold the master copy and the state.
  std::vector<size_t> server_of = use_ps ? shard_variables(graph, options.parameter_servers.size(), options.sharding)
                                         : std::vector<size_t>(graph.size(), 0);
  for (OpId v : emitter.order()) {
    const Op& op = graph.op(v);
    if (!emitter.selected(v) || op.parameter_count <= 0) continue;
    for (size_t r = 0; r < replicas; ++r) {
      StaticMemory memory = op_static_memory(op, run);
      if (use_ps) memory.optimizer_state_bytes = 0;  // the servers hold it
      add_static_memory(&plan.static_memory[device_of[r](v)], memory);
    }
    if (use_ps) {
      StaticMemory memory = op_static_memory(op, run);
      memory.gradient_bytes = 0;
      add_static_memory(&plan.static_memory[options.parameter_servers[server_of[v]]], memory);
    }
  }
  if (use_ps && notes) {
    std::vector<double> load(options.parameter_servers.size(), 0);
    for (OpId v = 0; v < graph.size(); ++v) load[server_of[v]] += graph.op(v).parameter_bytes();
    std::string text = std::string("variables sharded ") +
                       (options.sharding == Sharding::kRoundRobin ? "round robin" : "greedily by size") + " over " +
                       std::to_string(load.size()) + " parameter server(s):";
    for (size_t p = 0; p < load.size(); ++p) {
      text += " " + cluster.device(options.parameter_servers[p]).name.local() + "@task:" +
              std::to_string(cluster.device(options.parameter_servers[p]).node) + " " + megabytes(load[p]);
    }
    notes->push_back(text);
  }

  std::vector<Bucket> buckets = use_ps ? std::vector<Bucket>{} : make_buckets(graph, emitter, run, options.bucket_bytes, options.communication.framework);
  std::vector<CollectiveAlgorithm> bucket_algorithm(buckets.size());
  // `auto` picks as the library that runs the all-reduce would: among NCCL's algorithms on an
  // NCCL transport (every framework's but TensorFlow 1.x's gRPC between machines and a TCP/verbs
  // override), among all of them otherwise ("links" included).
  const std::optional<Transport> all_reduce_transport =
      use_ps ? std::nullopt : collective_transport(options.communication, cluster, options.replicas);
  const bool nccl = all_reduce_transport && is_nccl_transport(*all_reduce_transport);
  for (size_t b = 0; b < buckets.size(); ++b) {
    std::string reason;
    bucket_algorithm[b] =
        options.algorithm ? *options.algorithm
        : nccl ? choose_nccl_algorithm(CollectiveKind::kAllReduce, options.replicas, buckets[b].bytes, cluster, &reason,
                                      options.communication.nccl_version)
               : choose_allreduce(options.replicas, buckets[b].bytes, cluster, &reason);
    if (notes && replicas > 1 && !options.algorithm && (b == 0 || bucket_algorithm[b] != bucket_algorithm[b - 1])) {
      notes->push_back("all-reduce of bucket " + std::to_string(b) + " (" + megabytes(buckets[b].bytes) + "): auto picked " +
                       to_string(bucket_algorithm[b]) + " (" + reason + ")");
    }
  }
  if (notes && !use_ps) {
    double largest = 0;
    for (const Bucket& bucket : buckets) largest = std::max(largest, bucket.bytes);
    notes->push_back(std::to_string(buckets.size()) + grouping_note(options) + "; the largest " + megabytes(largest) +
                     (options.overlap ? ", overlapped with backward" : ", after the whole backward"));
  }

  // A parameter-server message: between machines, under a framework with a transport, the
  // sender's host CPU serialises it (its copies and per-message cost), the links carry it at
  // the transport's rate, the receiver's host CPU deserialises it; those CPUs are busy meanwhile
  // (the server's CPU is shared by every worker's messages and by its updates).
  auto host_task = [&](const char* verb, const std::string& tensor, DeviceId cpu, double bytes, const Transport& transport,
                       std::vector<TaskId> deps, int64_t step, int64_t replica, Phase phase) {
    Task task;
    task.name = StepEmitter::prefix(replica) + verb + tensor + ":" + cluster.device(cpu).name.local() +
                StepEmitter::suffix(step);
    task.phase = phase;
    task.step = step;
    task.replica = replica;
    task.op = tensor;
    task.device = cpu;
    task.op_kind = OpKind::kOther;
    task.memory_bytes = 2.0 * transport.host_copies_per_side * bytes;  // each copy reads and writes the bytes
    task.fixed_seconds = transport.host_seconds_per_message;
    task.deps = std::move(deps);
    return emitter.add(std::move(task));
  };
  auto send = [&](const std::string& tensor, DeviceId from, DeviceId to, double bytes, std::vector<TaskId> deps,
                  int64_t step, int64_t replica, Phase phase) {
    const std::optional<Transport> transport = message_transport(options.communication, cluster, from, to);
    if (!transport) return emitter.transfer(tensor, from, to, bytes, std::move(deps), step, replica, phase);
    const int index = plan_transport_index(&plan, *transport);
    if (transport->costs_host()) {
      deps = {host_task("serialize/", tensor, host_cpu_of(cluster, cpus, from), bytes, *transport, std::move(deps), step,
                        replica, phase)};
    }
    TaskId sent = emitter.transfer(tensor, from, to, bytes, std::move(deps), step, replica, phase);
    plan.tasks[sent].transport = index;
    if (!transport->costs_host()) return sent;
    return host_task("deserialize/", tensor, host_cpu_of(cluster, cpus, to), bytes, *transport, {sent}, step, replica,
                     phase);
  };
  auto collective_transport_index = [&](const std::vector<DeviceId>& group) {
    const std::optional<Transport> transport = collective_transport(options.communication, cluster, group);
    return transport ? plan_transport_index(&plan, *transport) : -1;
  };

  // With local aggregation, each machine's first replica ("leader") talks to the servers for
  // all the replicas of its machine.
  std::vector<size_t> leader_of(replicas);
  std::vector<std::vector<size_t>> machine_members(replicas);
  std::unordered_map<int, size_t> leader_of_node;  // the first replica on each machine
  for (size_t r = 0; r < replicas; ++r) {
    leader_of[r] = r;
    if (!options.local_aggregation) continue;
    leader_of[r] = leader_of_node.emplace(cluster.device(options.replicas[r]).node, r).first->second;
  }
  for (size_t r = 0; r < replicas; ++r) machine_members[leader_of[r]].push_back(r);

  // parameters_ready[r][v]: what replica r's forward of op v waits for in the coming step.
  std::vector<std::vector<std::vector<TaskId>>> parameters_ready(replicas, std::vector<std::vector<TaskId>>(graph.size()));
  std::vector<std::vector<TaskId>> start_after(replicas);
  std::vector<TaskId> collectives_so_far;  ///< this step's and the earlier steps' all-reduces, in order
  // TensorFlow 1.x runs one step per session.run, which returns when every update op of the
  // step has run: a worker's next step (its pulls, or its first ops) starts after all of them.
  // Other frameworks let a variable's next use wait for its own update only.
  const bool step_barrier = training && options.communication.framework == Framework::kTensorFlow1;
  std::vector<std::vector<TaskId>> updates_of_step(replicas);  ///< what each replica's next step waits for

  for (int64_t step = 0; step < run.steps; ++step) {
    std::vector<ReplicaStep> emitted(replicas);
    for (size_t r = 0; r < replicas; ++r) {
      const int64_t replica = static_cast<int64_t>(r);
      if (use_ps) {
        // Pull every variable this step reads from its server (step 0 reads the initial values).
        // With local aggregation only each machine's leader pulls, then copies to the others.
        const size_t leader = leader_of[r];
        for (OpId v : emitter.order()) {
          const Op& op = graph.op(v);
          if (!emitter.selected(v) || op.parameter_count <= 0) continue;
          if (leader != r) {
            TaskId copy = emitter.transfer(op.name, device_of[leader](v), device_of[r](v), op.parameter_bytes(),
                                           parameters_ready[leader][v], step, replica, Phase::kPull);
            parameters_ready[r][v] = {copy};
            continue;
          }
          DeviceId server = options.parameter_servers[server_of[v]];
          std::vector<TaskId> after = parameters_ready[r][v];
          if (step_barrier) after.insert(after.end(), updates_of_step[r].begin(), updates_of_step[r].end());
          TaskId pull = send(op.name, server, device_of[r](v), op.parameter_bytes(), std::move(after), step, replica,
                             Phase::kPull);
          parameters_ready[r][v] = {pull};
        }
      }
      StepEmitter::Inputs inputs;
      inputs.step = step;
      inputs.replica = replica;
      inputs.device_of = device_of[r];
      inputs.parameters_ready = [&, r](OpId v) { return parameters_ready[r][v]; };
      inputs.start_after = step_barrier && !use_ps ? updates_of_step[r] : start_after[r];
      inputs.compute_scale = jitter_factor(run.seed, replica, step, run.jitter_sigma);
      emitted[r] = emitter.emit(inputs);
    }
    if (!training) {
      // Each replica's next inference step starts after its previous one.
      for (size_t r = 0; r < replicas; ++r) {
        start_after[r].clear();
        for (OpId v : emitter.order()) {
          if (emitted[r].forward[v] && graph.outputs(v).empty()) start_after[r].push_back(*emitted[r].forward[v]);
        }
      }
      continue;
    }

    for (auto& updates : updates_of_step) updates.clear();
    if (use_ps) {
      for (OpId v : emitter.order()) {
        const Op& op = graph.op(v);
        if (!emitter.selected(v) || op.parameter_count <= 0 || !emitted[0].backward[v]) continue;
        DeviceId server = options.parameter_servers[server_of[v]];
        const OptimizerCost cost = optimizer_cost(run.optimizer, op.dtype_bytes);
        auto apply = [&](std::vector<TaskId> pushes, double gradients, int64_t replica) {
          // Sum the gradients (one add per element each), then the optimizer update.
          Task task;
          task.name = StepEmitter::prefix(replica) + "apply/" + op.name + StepEmitter::suffix(step);
          task.phase = Phase::kApply;
          task.step = step;
          task.replica = replica;
          task.op = op.name;
          task.device = server;
          task.op_kind = OpKind::kOptimizer;
          task.flops = (gradients + cost.flops_per_parameter) * op.parameter_count;
          task.memory_bytes = (gradients * op.dtype_bytes + cost.bytes_per_parameter) * op.parameter_count;
          task.deps = std::move(pushes);
          return emitter.add(std::move(task));
        };
        std::vector<TaskId> pushes;
        for (size_t r = 0; r < replicas; ++r) {
          if (leader_of[r] != r) continue;  // its gradient travels in its machine's sum
          std::vector<TaskId> ready = {*emitted[r].backward[v]};
          if (machine_members[r].size() > 1) {
            Task local;
            local.name = StepEmitter::prefix(static_cast<int64_t>(r)) + "localsum/" + op.name + StepEmitter::suffix(step);
            local.kind = TaskKind::kCollective;
            local.phase = Phase::kCollective;
            local.step = step;
            local.replica = static_cast<int64_t>(r);
            local.op = op.name;
            local.algorithm = CollectiveAlgorithm::kRing;
            local.bytes = gradient_bytes(op, run);
            for (size_t member : machine_members[r]) {
              local.group.push_back(device_of[member](v));
              local.deps.push_back(*emitted[member].backward[v]);
            }
            local.device = local.group.front();
            local.reads_dep_outputs = false;  // sums the gradients (static memory)
            local.transport = collective_transport_index(local.group);
            ready = {emitter.add(std::move(local))};
          }
          // The push's first task (the serialisation, or the transfer) sends the gradient in static
          // memory, not the output of the backward task it waits for (tasks[i].id == i).
          const TaskId first = plan.tasks.size();
          TaskId push = send(op.name, device_of[r](v), server, gradient_bytes(op, run), ready, step, static_cast<int64_t>(r),
                             Phase::kPush);
          plan.tasks[first].reads_dep_outputs = false;
          if (options.mode == SyncMode::kAsync) {
            // The server applies each worker's gradient on its own; the worker's next pull reads it.
            parameters_ready[r][v] = {apply({push}, 1, static_cast<int64_t>(r))};
            if (step_barrier) updates_of_step[r].push_back(parameters_ready[r][v].front());
          } else {
            pushes.push_back(push);
          }
        }
        if (options.mode == SyncMode::kSync) {
          TaskId applied = apply(pushes, static_cast<double>(pushes.size()), -1);
          for (size_t r = 0; r < replicas; ++r) parameters_ready[r][v] = {applied};
          if (step_barrier) {
            for (size_t r = 0; r < replicas; ++r) {
              if (leader_of[r] == r) updates_of_step[r].push_back(applied);
            }
          }
        }
      }
      continue;
    }

    // All-reduce: one collective per bucket, serialized on the communication stream.
    std::vector<TaskId> all_backward;
    if (!options.overlap) {
      for (size_t r = 0; r < replicas; ++r) {
        for (const auto& task : emitted[r].backward) {
          if (task) all_backward.push_back(*task);
        }
      }
    }
    for (size_t b = 0; b < buckets.size(); ++b) {
      Task collective;
      collective.name = "allreduce/bucket" + std::to_string(b) + StepEmitter::suffix(step);
      collective.kind = TaskKind::kCollective;
      collective.phase = Phase::kCollective;
      collective.step = step;
      collective.group = options.replicas;
      collective.device = options.replicas.front();
      collective.algorithm = bucket_algorithm[b];
      collective.bytes = buckets[b].bytes;
      collective.transport = collective_transport_index(collective.group);
      collective.op = graph.op(buckets[b].ops.front()).name;
      collective.reads_dep_outputs = false;  // reduces the gradients (static memory), not the backward outputs
      if (options.overlap) {
        for (size_t r = 0; r < replicas; ++r) {
          for (OpId v : buckets[b].ops) collective.deps.push_back(*emitted[r].backward[v]);
        }
      } else {
        collective.deps = all_backward;
      }
      if (const auto wait = collective_to_wait_for(collectives_so_far, options.communication.concurrent_collectives)) {
        collective.deps.push_back(*wait);
      }
      TaskId reduced = emitter.add(std::move(collective));
      collectives_so_far.push_back(reduced);
      for (size_t r = 0; r < replicas; ++r) {
        for (OpId v : buckets[b].ops) {
          TaskId update = emitter.add(
              optimizer_task(graph.op(v), optimizer_step(run, options.communication.framework), device_of[r](v), step, static_cast<int64_t>(r), reduced));
          parameters_ready[r][v] = {update};
          if (step_barrier) updates_of_step[r].push_back(update);
        }
      }
    }
  }
  return plan;
}

}  // namespace placesim
