#include "sim/planner/parallel_3d_emission.h"

#include <utility>

#include "sim/spec/spec_error.h"
#include "sim/plan/collective_schedule.h"
#include "sim/planner/framework_transports.h"

namespace placesim {

Parallel3dEmission::Parallel3dEmission(const OpGraph& the_graph, const Cluster& the_cluster, const RunOptions& the_run,
                                       const ParallelismOptions& the_options, StepEmitter& the_emitter,
                                       const Parallel3dLayout& the_layout, const Parallel3dPartition& the_partition,
                                       bool cell_plan)
    : graph(the_graph),
      cluster(the_cluster),
      run(the_run),
      options(the_options),
      emitter(the_emitter),
      layout(the_layout),
      partition(the_partition),
      replicas(the_options.replicas()),
      stages(the_options.pipeline),
      ranks(the_options.tensor),
      chunks(the_options.virtual_stages),
      model_chunks(the_options.pipeline * the_options.virtual_stages),
      asynchronous(the_options.asynchronous && !cell_plan),
      micro_batches(cell_plan ? 1 : the_options.micro_batches * (asynchronous ? the_run.steps : 1)),
      scale(1.0 / static_cast<double>(the_options.micro_batches)),
      symmetric(the_run.symmetry || cell_plan),
      rings_only(the_run.symmetry && !cell_plan),
      simulated_replicas(symmetric ? 1 : replicas),
      simulated_ranks(symmetric ? 1 : ranks),
      mode(symmetric_mode(cell_plan)),
      shards(the_options.zero_shards()),
      gathers_parameters(the_options.zero_stage >= 3 && the_options.zero_shards() > 1),
      previous_update(simulated_replicas, std::vector<std::vector<std::optional<TaskId>>>(
                                              the_graph.size(), std::vector<std::optional<TaskId>>(simulated_ranks))),
      previous_slot_ends(simulated_replicas, std::vector<std::vector<std::vector<TaskId>>>(
                                                 stages, std::vector<std::vector<TaskId>>(simulated_ranks))),
      data_collectives(stages, std::vector<std::vector<TaskId>>(simulated_ranks)) {}

std::optional<TaskId> Parallel3dEmission::last_data_collective(int64_t s, int64_t r) const {
  return collective_to_wait_for(data_collectives[s][r], 1);
}

std::optional<TaskId> Parallel3dEmission::data_collective_to_wait_for(int64_t s, int64_t r) const {
  return collective_to_wait_for(data_collectives[s][r], options.communication.concurrent_collectives);
}

bool Parallel3dEmission::on_one_machine(const std::vector<DeviceId>& group) const {
  for (DeviceId d : group) {
    if (cluster.device(d).node != cluster.device(group.front()).node) return false;
  }
  return true;
}

CollectiveAlgorithm Parallel3dEmission::algorithm_for(CollectiveKind kind, const std::vector<DeviceId>& group,
                                                      double bytes) {
  auto key = std::make_tuple(kind, group, bytes);
  auto it = picked_.find(key);
  if (it != picked_.end()) return it->second;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::string why;
  if (kind == CollectiveKind::kAllToAll) {
    // Expert parallelism's exchanges: NCCL's grouped sends and receives, under symmetry too (the
    // representative's flows to each peer, mirrored by every member's: parallel_3d_symmetry.cpp).
    algorithm = CollectiveAlgorithm::kPairwise;
  } else if (rings_only) {
    if (options.algorithm && *options.algorithm != CollectiveAlgorithm::kRing) {
      throw SpecError::strategy("parallelism/algorithm",
                       mode.what + " needs ring all-reduces, got \"" + to_string(*options.algorithm) + "\"");
    }
  } else if (options.algorithm && collective_supported(kind, *options.algorithm, nullptr) &&
             !(*options.algorithm == CollectiveAlgorithm::kHostHalvingDoubling && on_one_machine(group))) {
    // Gloo's host-staged halving-doubling runs between machines; a group inside one machine
    // (a tensor group, one machine's replicas) takes NCCL's choice, as Caffe2's NCCL ops did.
    if (!applicable(*options.algorithm, group, cluster, &why)) {
      throw SpecError::strategy("parallelism/algorithm", why);
    }
    algorithm = *options.algorithm;
  } else {
    algorithm = choose_nccl_algorithm(kind, group, bytes, cluster, &why, options.communication.nccl_version);
  }
  picked_.emplace(key, algorithm);
  return algorithm;
}

TaskId Parallel3dEmission::collective(const std::string& task_name, std::vector<DeviceId> group, double bytes,
                                      std::vector<TaskId> deps, int64_t step, const std::string& op,
                                      CollectiveKind kind) {
  Task task;
  task.name = task_name;
  task.kind = TaskKind::kCollective;
  task.phase = Phase::kCollective;
  task.step = step;
  task.op = op;
  task.algorithm = algorithm_for(kind, group, bytes);
  task.collective = kind;
  task.bytes = bytes;
  task.device = group.front();
  task.group = std::move(group);
  task.deps = std::move(deps);
  if (const auto transport = collective_transport(options.communication, cluster, task.group)) {
    task.transport = emitter.transport_index(*transport);
  }
  return emitter.add(std::move(task));
}

TaskId Parallel3dEmission::stage_transfer(const std::string& tensor, DeviceId from, DeviceId to, double bytes,
                                          std::vector<TaskId> deps, int64_t step, int64_t replica) {
  const TaskId id = emitter.transfer(tensor, from, to, bytes, std::move(deps), step, replica, Phase::kTransfer);
  if (cluster.device(from).node != cluster.device(to).node) {
    if (const auto transport = collective_transport(options.communication, cluster, {from, to})) {
      emitter.at(id).transport = emitter.transport_index(*transport);
    }
  }
  return id;
}

TaskId Parallel3dEmission::gradient_collective(const std::string& task_name, std::vector<DeviceId> group, double bytes,
                                               std::vector<TaskId> deps, int64_t step, const std::string& op,
                                               CollectiveKind kind) {
  const TaskId id = collective(task_name, std::move(group), bytes, std::move(deps), step, op, kind);
  emitter.at(id).reads_dep_outputs = false;
  return id;
}

}  // namespace placesim
