#include "sim/planner/parallel_3d_builder.h"

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/core/glob.h"
#include "sim/core/input_error.h"
#include "sim/core/units_format.h"
#include "sim/plan/collective_schedule.h"
#include "sim/planner/parallel_3d_layout.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/pipeline_builder.h"
#include "sim/planner/plan_builder.h"
#include "sim/planner/step_emitter.h"
#include "sim/planner/tensor_parallel.h"

namespace placesim {
namespace {


/// The marker task closing one slot of a stage on one rank's device.
std::string slot_marker(const std::string& replica_prefix, int64_t m, bool forward, int64_t s, int64_t r,
                        int64_t ranks) {
  return replica_prefix + "mb" + std::to_string(m) + (forward ? "/fwd-done/" : "/bwd-done/") + "stage" +
         std::to_string(s) + (ranks > 1 ? "/tp" + std::to_string(r) : "");
}

/// The tasks of `cell` that no other task of it depends on: the next slot waits for these only,
/// so that the ordering keeps no buffer alive longer than its data needs it.
std::vector<TaskId> cell_sinks(const ExecutionPlan& plan, const std::vector<TaskId>& cell) {
  std::set<TaskId> awaited;
  for (TaskId id : cell) awaited.insert(plan.tasks[id].deps.begin(), plan.tasks[id].deps.end());
  std::vector<TaskId> sinks;
  for (TaskId id : cell) {
    if (!awaited.count(id)) sinks.push_back(id);
  }
  return sinks;
}

/// By (micro-batch, op): one task id per tensor rank.
using RankTasks = std::vector<std::vector<std::vector<TaskId>>>;

/// What needs identical replicas: symmetry, or the closed-form tier's cell plan (`cells`).
struct SymmetricMode {
  std::string path;       ///< the JSON path of the choice
  std::string what;       ///< for messages: "symmetry"
  std::string otherwise;  ///< what to set instead
};

SymmetricMode symmetric_mode(bool cells) {
  if (cells) {
    return {"/simulation/tier", "the closed-form tier (\"simulation\": {\"tier\": \"closed-form\"})",
            "use \"tier\": \"analytical\""};
  }
  return {"/simulation/symmetry", "symmetry (\"simulation\": {\"symmetry\": \"representatives\"})",
          "set \"symmetry\": \"off\""};
}

/// Symmetry holds only between devices of one kind at one speed, without per-device jitter.
void require_symmetric_devices(const Cluster& cluster, const RunOptions& run, const ParallelismOptions& options,
                               const SymmetricMode& mode) {
  if (run.jitter_sigma > 0) {
    throw InputError("", mode.path, mode.what + " needs identical replicas, but perturbations.jitter gives each device "
                                    "its own slowdowns; " + mode.otherwise);
  }
  const ClusterDevice& first = cluster.device(options.devices.front());
  for (DeviceId id : options.devices) {
    const ClusterDevice& device = cluster.device(id);
    if (device.spec.id != first.spec.id || device.speed_factor != first.speed_factor || device.shares_compute_with) {
      throw InputError("", mode.path, mode.what + " needs identical devices, but " + device.name.canonical() + " (" +
                                          device.spec.id + ", speed x" + std::to_string(device.speed_factor) +
                                          ") differs from " + first.name.canonical() + "; " + mode.otherwise);
    }
  }
}

/// One hop of the ring the engine builds over `group`: the one leaving `from`.
std::pair<DeviceId, DeviceId> ring_hop_from(DeviceId from, const std::vector<DeviceId>& group, const Cluster& cluster) {
  std::vector<DeviceId> ring = topology_ring(group, cluster);
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] == from) return {from, ring[(i + 1) % ring.size()]};
  }
  return {from, from};
}

void add_ring_hops(const std::vector<DeviceId>& group, const Cluster& cluster,
                   std::vector<std::pair<DeviceId, DeviceId>>* images) {
  std::vector<DeviceId> ring = topology_ring(group, cluster);
  for (size_t i = 0; i < ring.size(); ++i) images->emplace_back(ring[i], ring[(i + 1) % ring.size()]);
}

/// Fills plan->symmetry: every device repeats the stage's (replica 0, rank 0) device; the flows
/// the plan simulates (pipeline transfers, one hop of each tensor and data-parallel ring) with
/// their mirrors, whose routes must look the same, give the links' bandwidth divisors.
void describe_symmetry(const Cluster& cluster, const ParallelismOptions& options,
                       const std::vector<std::pair<int64_t, int64_t>>& tied_stages, ExecutionPlan* plan,
                       std::vector<std::string>* notes) {
  const int64_t replicas = options.data, stages = options.pipeline, ranks = options.tensor;
  const Parallel3dLayout layout(options);
  PlanSymmetry& symmetry = plan->symmetry;
  symmetry.representative_of.resize(cluster.devices().size());
  for (DeviceId id = 0; id < cluster.devices().size(); ++id) symmetry.representative_of[id] = id;
  std::map<DeviceId, int64_t> stage_of_device;
  for (int64_t d = 0; d < replicas; ++d) {
    for (int64_t s = 0; s < stages; ++s) {
      for (int64_t r = 0; r < ranks; ++r) {
        symmetry.representative_of[options.device(d, s, r)] = options.device(0, s, 0);
        stage_of_device[options.device(d, s, r)] = s;
      }
    }
  }
  std::vector<MirroredFlow> flows;
  std::set<std::pair<int64_t, int64_t>> stage_pairs;
  for (const Task& task : plan->tasks) {
    if (task.kind == TaskKind::kTransfer && task.source != task.device) {
      stage_pairs.emplace(stage_of_device.at(task.source), stage_of_device.at(task.device));
    }
  }
  for (auto [from, to] : stage_pairs) {
    MirroredFlow flow{options.device(0, from, 0), options.device(0, to, 0), {}};
    for (int64_t d = 0; d < replicas; ++d) {
      for (int64_t r = 0; r < ranks; ++r) flow.images.emplace_back(options.device(d, from, r), options.device(d, to, r));
    }
    flows.push_back(std::move(flow));
  }
  // A ring all-reduce's hop leaving the stage's representative, mirrored by every hop of the
  // groups `group(k)`, k < copies (group(0) is the representative's).
  auto add_ring_flow = [&](int64_t s, int64_t copies, const std::function<std::vector<DeviceId>(int64_t)>& group) {
    auto [from, to] = ring_hop_from(options.device(0, s, 0), group(0), cluster);
    MirroredFlow flow{from, to, {}};
    for (int64_t k = 0; k < copies; ++k) add_ring_hops(group(k), cluster, &flow.images);
    flows.push_back(std::move(flow));
  };
  for (int64_t s = 0; s < stages; ++s) {
    if (ranks > 1) {  // tensor all-reduces of replica 0, mirrored by the other replicas'
      add_ring_flow(s, replicas, [&](int64_t d) { return layout.tensor_group(d, s); });
    }
    const int64_t shards = options.zero_shards();
    if (replicas > 1 && (options.zero_stage == 0 || shards == replicas)) {  // data-parallel collectives of rank 0, mirrored by the other ranks'
      add_ring_flow(s, ranks, [&](int64_t r) { return layout.data_group(s, r); });
    } else if (replicas > 1) {  // hybrid sharding: the shard groups' collectives, then the groups across them
      const int64_t groups = replicas / shards;
      add_ring_flow(s, ranks * groups, [&](int64_t k) { return layout.shard_group(k / ranks * shards, s, k % ranks); });
      if (groups > 1) {
        add_ring_flow(s, ranks * shards, [&](int64_t k) { return layout.cross_group(k / ranks, s, k % ranks); });
      }
    }
  }
  for (auto [owner, reader] : tied_stages) {  // tied weights' all-reduce between two stages' devices
    add_ring_flow(owner, replicas * ranks, [&, owner = owner, reader = reader](int64_t k) {
      return std::vector<DeviceId>{options.device(k / ranks, owner, k % ranks), options.device(k / ranks, reader, k % ranks)};
    });
  }
  // One search per source for all its images' routes.
  std::map<DeviceId, std::vector<DeviceId>> targets;
  for (const MirroredFlow& flow : flows) {
    targets[flow.from].push_back(flow.to);
    for (auto [from, to] : flow.images) targets[from].push_back(to);
  }
  for (const auto& [from, to] : targets) cluster.prepare_routes(from, to);
  // Mirrors must see the network the representative sees: compute_link_orbits refuses image
  // routes of another length and orbits that join different links.
  try {
    compute_link_orbits(flows, cluster, &symmetry);
  } catch (const std::invalid_argument& error) {
    throw InputError("", "/simulation/symmetry",
                     std::string("symmetry does not hold: ") + error.what() + "; set \"symmetry\": \"off\"");
  }
  if (notes) {
    notes->push_back("symmetry: " + std::to_string(stages) + " of " + std::to_string(options.devices.size()) +
                     " devices simulated (tensor rank 0 of replica 0 per stage), the others repeat them; " +
                     (symmetry.approximate_links == 0
                          ? std::string("the network is exact under the symmetry")
                          : "approximate on " + std::to_string(symmetry.approximate_links) +
                                " link orbits where flows of different multiplicity meet"));
  }
}

/// The builder behind both entry points. With `cell_index`, it emits a cell plan
/// (parallel_3d_builder.h): one micro-batch of one step, representatives only, no network
/// description, and records each stage's slot markers.
ExecutionPlan build_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                         const ParallelismOptions& options, const std::string& name, std::vector<std::string>* notes,
                         PipelineCells* cell_index) {
  const int64_t replicas = options.data;
  const int64_t stages = options.pipeline;
  const int64_t ranks = options.tensor;
  // Interleaved 1F1B: the model in stages x chunks chunks, chunk c on stage c mod stages.
  const int64_t chunks = options.virtual_stages;
  const int64_t model_chunks = stages * chunks;
  // Costs are always 1/M of the batch; a cell plan emits only the first micro-batch.
  const int64_t micro_batches = cell_index ? 1 : options.micro_batches;
  if (options.micro_batches > run.batch_size) {
    throw InputError("", options.json_path + "/micro_batches",
                     "a batch of " + std::to_string(run.batch_size) + " samples cannot be split into " +
                         std::to_string(options.micro_batches) + " micro-batches (at most run.batch_size)");
  }
  const double scale = 1.0 / static_cast<double>(options.micro_batches);
  // Symmetry: one data replica and one tensor rank per stage are simulated for all.
  const bool symmetric = run.symmetry || cell_index;
  const int64_t steps = cell_index ? 1 : run.steps;
  const int64_t simulated_replicas = symmetric ? 1 : replicas;
  const int64_t simulated_ranks = symmetric ? 1 : ranks;
  const SymmetricMode mode = symmetric_mode(cell_index != nullptr);
  if (symmetric) require_symmetric_devices(cluster, run, options, mode);
  ExecutionPlan plan = start_plan(name, run, cluster, run.batch_size * replicas);
  StepEmitter emitter(graph, cluster, run, &plan);
  const bool training = emitter.training();
  const Parallel3dLayout layout(options);
  auto device = [&](int64_t d, int64_t s, int64_t r) { return layout.device(d, s, r); };

  // Which ops the tensor groups split, and what one rank of a group runs.
  std::vector<TensorRole> roles = tensor_parallel_roles(graph, options.column_parallel, options.row_parallel);
  if (options.sequence_parallel && ranks > 1) use_sequence_parallelism(&roles);
  std::vector<Op> shard(graph.size());
  std::vector<double> saved(graph.size());
  // Selective recomputation (Korthikanti et al. 2022, section 5): the core attention's ops keep
  // nothing made among them and re-run their forward in backward.
  std::vector<bool> recomputed(graph.size(), false);
  if (!options.selective_recompute.empty()) {
    if (run.recompute) {
      throw InputError("", options.json_path + "/selective_recompute",
                       "selective recomputation and run.recompute (full) both asked for: choose one");
    }
    for (OpId v = 0; v < graph.size(); ++v) {
      for (const auto& pattern : options.selective_recompute) {
        recomputed[v] = recomputed[v] || glob_match(pattern, graph.op(v).name);
      }
    }
  }
  size_t split_ops = 0;
  for (OpId v : emitter.order()) {
    const Op& op = graph.op(v);
    const int64_t heads = attention_heads(op);
    const bool splits_heads = roles[v] != TensorRole::kReplicated && roles[v] != TensorRole::kSequence;
    if (ranks > 1 && heads > 0 && splits_heads && heads % ranks != 0) {
      throw InputError("", options.json_path + "/tensor",
                       "a tensor-parallel group of " + std::to_string(ranks) + " does not divide the " +
                           std::to_string(heads) + " attention heads of \"" + op.name +
                           "\": each rank must hold whole heads");
    }
    shard[v] = tensor_parallel_shard(op, roles[v], ranks);
    saved[v] = saved_activation_bytes(graph, roles, ranks, v, options.selective_recompute.empty() ? nullptr : &recomputed);
    split_ops += roles[v] != TensorRole::kReplicated;
  }
  // With recomputation, an op that reads a tensor from another layer (memory_model.h,
  // crosses_layers) keeps what its backward reads until that backward, as without: it holds the
  // checkpoint its layer is recomputed from (in a GPT layer, ln_1's saved input: 2 s b h bytes
  // in fp16). Every other forward buffer is freed once its consumers' forwards end.
  std::vector<bool> holds_checkpoint(graph.size(), false);
  for (OpId v : emitter.order()) {
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && emitter.selected(input.op) && crosses_layers(graph, input.op, v)) holds_checkpoint[v] = true;
    }
  }

  // chunk_of[v]: the model chunk of op v (its stage without interleaving); stage_of[v]: the
  // pipeline stage that runs it.
  PipelineOptions stage_options;
  for (int64_t c = 0; c < model_chunks; ++c) stage_options.devices.push_back(device(0, c % stages, 0));
  stage_options.json_path = options.json_path;
  const std::string split_path = options.json_path + (chunks > 1 ? "/virtual_stages" : "/pipeline");
  const std::string interleaving =
      chunks > 1 ? "virtual_stages " + std::to_string(chunks) + " splits the model into pipeline " +
                       std::to_string(stages) + " x " + std::to_string(chunks) + " = " + std::to_string(model_chunks) +
                       " chunks"
                 : std::string();
  if (chunks > 1) {
    int64_t compute_ops = 0;
    for (OpId v = 0; v < graph.size(); ++v) compute_ops += graph.op(v).forward_flops + graph.op(v).backward_flops > 0;
    if (compute_ops < model_chunks) {
      throw InputError("", split_path, interleaving + ", but the graph has only " + std::to_string(compute_ops) +
                                           " ops with FLOPs to split: use fewer virtual stages");
    }
  }
  std::vector<size_t> chunk_of;
  try {
    chunk_of = assign_pipeline_stages(graph, stage_options);
  } catch (const InputError& error) {
    throw InputError("", split_path, (chunks > 1 ? interleaving + ": " : std::string()) + error.message());
  }
  std::vector<size_t> stage_of(chunk_of.size());
  for (OpId v = 0; v < graph.size(); ++v) stage_of[v] = chunk_of[v] % static_cast<size_t>(stages);

  // Tied weights on different stages (Megatron's shared word embedding, Narayanan et al. 2021,
  // section 3.2 of the Megatron-LM code's "embedding group"): the reader's stage holds a copy of
  // the owner's shard, and after the data-parallel reduction the two copies' gradients are
  // all-reduced between the stages before either is updated.
  std::vector<std::optional<OpId>> copy_of(graph.size());
  std::vector<bool> tied(graph.size(), false);
  std::vector<std::pair<OpId, OpId>> ties;  // (reader, owner)
  std::vector<std::pair<int64_t, int64_t>> tied_stages;  // (owner's stage, reader's stage)
  for (const auto& [reader_name, owner_name] : options.tied_weights) {
    const OpId reader = graph.find(reader_name), owner = graph.find(owner_name);
    if (reader >= graph.size() || owner >= graph.size() || !emitter.selected(reader) || !emitter.selected(owner) ||
        stage_of[reader] == stage_of[owner] || shard[owner].parameter_count <= 0 ||
        graph.op(reader).parameter_count > 0) {  // a reader with weights of its own is not tied
      continue;
    }
    copy_of[reader] = owner;
    tied[reader] = tied[owner] = true;
    ties.emplace_back(reader, owner);
    tied_stages.emplace_back(static_cast<int64_t>(stage_of[owner]), static_cast<int64_t>(stage_of[reader]));
    if (notes) {
      notes->push_back("tied weights: " + graph.op(reader).name + " (stage " + std::to_string(stage_of[reader]) +
                       ") holds a copy of " + owner_name + " (stage " + std::to_string(stage_of[owner]) +
                       "); their gradients are all-reduced between the two stages");
    }
  }
  // The parameters op v holds: its own shard, or the copy of the weights it reads.
  auto holder = [&](OpId v) {
    if (!copy_of[v]) return shard[v];
    Op copy = shard[*copy_of[v]];
    copy.name = graph.op(v).name;
    return copy;
  };
  auto held_bytes = [&](OpId v) { return copy_of[v] ? shard[*copy_of[v]].parameter_bytes() : shard[v].parameter_bytes(); };

  // Collective algorithms, picked once per kind, group and size. The strategy's `algorithm` names
  // the all-reduces'; all-gathers and reduce-scatters take it where it applies to them (ring,
  // hierarchical) and otherwise the faster of the two.
  std::map<std::tuple<CollectiveKind, std::vector<DeviceId>, double>, CollectiveAlgorithm> picked;
  auto algorithm_for = [&](CollectiveKind kind, const std::vector<DeviceId>& group, double bytes) {
    auto key = std::make_tuple(kind, group, bytes);
    auto it = picked.find(key);
    if (it != picked.end()) return it->second;
    CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
    std::string why;
    if (symmetric) {  // the engine simulates one hop of each ring per phase
      if (options.algorithm && *options.algorithm != CollectiveAlgorithm::kRing) {
        throw InputError("", options.json_path + "/algorithm",
                         mode.what + " needs ring all-reduces, got \"" + to_string(*options.algorithm) + "\"");
      }
    } else if (options.algorithm && collective_supported(kind, *options.algorithm, nullptr)) {
      if (!applicable(*options.algorithm, group, cluster, &why)) {
        throw InputError("", options.json_path + "/algorithm", why);
      }
      algorithm = *options.algorithm;
    } else {
      algorithm = choose_collective_algorithm(kind, group, bytes, cluster, &why);
    }
    picked.emplace(key, algorithm);
    return algorithm;
  };
  auto collective = [&](const std::string& task_name, std::vector<DeviceId> group, double bytes,
                        std::vector<TaskId> deps, int64_t step, const std::string& op,
                        CollectiveKind kind = CollectiveKind::kAllReduce) {
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
    return emitter.add(std::move(task));
  };

  // ZeRO: the replicas a shard is divided over, their groups, and the groups across them (hybrid).
  const int64_t shards = options.zero_shards();
  const bool gathers_parameters = options.zero_stage >= 3 && shards > 1;
  if (shards > 1 && notes) {
    notes->push_back("ZeRO stage " + std::to_string(options.zero_stage) + " over shard groups of " +
                     std::to_string(shards) + " replicas" +
                     (shards < replicas ? " (hybrid: shards all-reduced across " + std::to_string(replicas / shards) +
                                              " groups)"
                                        : std::string()));
  }

  std::vector<double> stage_flops(stages, 0);
  std::vector<size_t> stage_ops(stages, 0);
  for (OpId v : emitter.order()) {
    if (!emitter.selected(v)) continue;
    const int64_t s = static_cast<int64_t>(stage_of[v]);
    // ZeRO (Rajbhandari et al. 2020, figure 1): stage 1 divides the optimizer state over the
    // shard group, stage 2 also the gradients, stage 3 also the parameters.
    StaticMemory memory = op_static_memory(holder(v), run);
    if (options.zero_stage >= 1) memory.optimizer_state_bytes /= static_cast<double>(shards);
    if (options.zero_stage >= 2) memory.gradient_bytes /= static_cast<double>(shards);
    if (options.zero_stage >= 3) memory.parameter_bytes /= static_cast<double>(shards);
    for (int64_t d = 0; d < replicas; ++d) {
      for (int64_t r = 0; r < ranks; ++r) add_static_memory(&plan.static_memory[device(d, s, r)], memory);
    }
    stage_flops[s] += shard[v].forward_flops + shard[v].backward_flops;
    ++stage_ops[s];
  }
  if (notes) {
    char sizes[160];
    std::snprintf(sizes, sizeof(sizes), "data %lld x pipeline %lld x tensor %lld = %zu devices, %lld micro-batches of %g samples",
                  static_cast<long long>(replicas), static_cast<long long>(stages), static_cast<long long>(ranks),
                  options.devices.size(), static_cast<long long>(micro_batches),
                  static_cast<double>(run.batch_size) * scale);
    notes->push_back(std::string(sizes) + "; " + std::to_string(split_ops) + " ops split over each tensor group" +
                     (chunks > 1 ? "; interleaved 1F1B, " + std::to_string(chunks) + " virtual stages per device (" +
                                       std::to_string(model_chunks) + " model chunks, chunk c on stage c mod " +
                                       std::to_string(stages) + ")"
                                 : std::string()));
    std::string stage_text = "pipeline stages (per rank):";
    for (int64_t s = 0; s < stages; ++s) {
      std::string held;  // interleaved: the stage's model chunks
      for (int64_t c = s; chunks > 1 && c < model_chunks; c += stages) held += (c == s ? " chunks " : "+") + std::to_string(c);
      stage_text += (s ? "," : "") + std::string(" stage ") + std::to_string(s) + held + " " +
                    std::to_string(stage_ops[s]) + " ops " + format_gigaflops(stage_flops[s]);
    }
    notes->push_back(layout.tensor_groups_note(cluster));
    notes->push_back(stage_text);
    if (replicas > 1) notes->push_back(layout.data_groups_note(cluster));
  }

  std::vector<std::vector<PipelineSlot>> schedule(stages);
  for (int64_t s = 0; s < stages; ++s) {
    schedule[s] = chunks > 1 ? interleaved_schedule(static_cast<size_t>(stages), static_cast<size_t>(s), chunks,
                                                    micro_batches, training)
                             : pipeline_schedule(options.schedule, static_cast<size_t>(stages), static_cast<size_t>(s),
                                                 micro_batches, training);
  }
  // previous_update[d][v][r]: the last update of replica d's rank r of op v.
  std::vector<std::vector<std::vector<std::optional<TaskId>>>> previous_update(
      replicas, std::vector<std::vector<std::optional<TaskId>>>(graph.size(), std::vector<std::optional<TaskId>>(ranks)));
  // previous_slot_ends[d][s][r]: the marker closing the stage's last slot on that device.
  std::vector<std::vector<std::vector<std::vector<TaskId>>>> previous_slot_ends(
      replicas, std::vector<std::vector<std::vector<TaskId>>>(stages, std::vector<std::vector<TaskId>>(ranks)));
  std::vector<std::vector<std::optional<TaskId>>> previous_data_collective(stages, std::vector<std::optional<TaskId>>(ranks));

  if (cell_index) {
    cell_index->forward_done.assign(model_chunks, PipelineCells::kNone);
    cell_index->backward_done.assign(model_chunks, PipelineCells::kNone);
    cell_index->first_update_task = PipelineCells::kNone;
  }
  for (int64_t step = 0; step < steps; ++step) {
    const std::string suffix = StepEmitter::suffix(step);
    // last_backward[d][v][r]: the last micro-batch's backward (the gradient is complete).
    std::vector<std::vector<std::vector<TaskId>>> last_backward(replicas,
                                                                std::vector<std::vector<TaskId>>(graph.size()));
    // ZeRO 3: the all-gather of an op's parameters by (shard group, micro-batch, op, rank, forward),
    // shared by the group's replicas.
    std::map<std::tuple<int64_t, int64_t, OpId, int64_t, bool>, TaskId> gathered;
    for (int64_t d = 0; d < simulated_replicas; ++d) {
      const std::string replica_prefix = replicas > 1 ? StepEmitter::prefix(d) : "";
      const int64_t replica = replicas > 1 ? d : -1;
      RankTasks forward_task(micro_batches, std::vector<std::vector<TaskId>>(graph.size()));
      RankTasks forward_ready(micro_batches, std::vector<std::vector<TaskId>>(graph.size()));
      RankTasks backward_task(micro_batches, std::vector<std::vector<TaskId>>(graph.size()));
      RankTasks backward_ready(micro_batches, std::vector<std::vector<TaskId>>(graph.size()));
      std::vector<std::map<std::tuple<OpId, int64_t, int64_t>, TaskId>> received(micro_batches);
      auto rank_name = [&](int64_t r) { return ranks > 1 ? "/tp" + std::to_string(r) : std::string(); };
      auto group_of = [&](int64_t s) { return layout.tensor_group(d, s); };
      // Megatron's scatter/gather (ParallelismOptions::scatter_gather): a tensor that each rank
      // holds whole (`bytes` per rank equal to the full tensor's) crosses between stages as 1/t
      // per rank, then a ring all-gather of the whole tensor over the receiving stage's tensor
      // group rebuilds it.
      auto scatters = [&](double bytes_per_rank, double full_bytes) {
        return options.scatter_gather && ranks > 1 && full_bytes > 0 && bytes_per_rank >= full_bytes;
      };
      // What each rank's consumers wait for: the all-gather, whose output (the whole tensor) is
      // on every rank of the group (sim/timeline/buffer_memory.h).
      std::vector<std::map<std::pair<OpId, int64_t>, std::vector<TaskId>>> scattered_inputs(micro_batches);
      std::vector<std::map<std::pair<OpId, OpId>, std::vector<TaskId>>> gathered_gradients(micro_batches);
      auto scatter_gather = [&](const std::string& tensor, int64_t from, int64_t to, double bytes,
                                const std::function<TaskId(int64_t)>& ready_on_rank, const std::string& gather_name,
                                const std::string& op_name) {
        std::vector<TaskId> pieces;
        for (int64_t r = 0; r < simulated_ranks; ++r) {
          pieces.push_back(emitter.transfer(tensor + rank_name(r) + "/scatter", device(d, from, r), device(d, to, r),
                                            bytes / static_cast<double>(ranks), {ready_on_rank(r)}, step, replica,
                                            Phase::kTransfer));
        }
        const TaskId gathered_id = collective(gather_name, group_of(to), bytes, std::move(pieces), step, op_name,
                                              CollectiveKind::kAllGather);
        emitter.at(gathered_id).output_bytes = bytes;  // the whole tensor again, on every rank
        return std::vector<TaskId>(static_cast<size_t>(simulated_ranks), gathered_id);
      };

      // ZeRO 3 (FSDP): an op's parameters are all-gathered over the shard group before its forward
      // and again before its backward, one gather after another ahead of the compute (prefetch),
      // from the start of the slot: a ring all-gather of the op's parameters (docs/llm-planning.md).
      auto gather = [&](int64_t m, int64_t s, OpId v, int64_t r, bool forward, std::optional<TaskId>* chain) {
        auto key = std::make_tuple(d / shards, m, v, r, forward);
        if (auto it = gathered.find(key); it != gathered.end()) return it->second;
        std::vector<TaskId> deps = previous_slot_ends[d][s][r];
        if (*chain) deps.push_back(**chain);
        if (previous_update[d][v][r]) deps.push_back(*previous_update[d][v][r]);
        const TaskId id = collective(replica_prefix + "mb" + std::to_string(m) + (forward ? "/fwd" : "/bwd") +
                                         "/zero3-allgather/" + graph.op(v).name + rank_name(r) + suffix,
                                     layout.shard_group(d, s, r), held_bytes(v), std::move(deps), step,
                                     graph.op(v).name, CollectiveKind::kAllGather);
        gathered.emplace(key, id);
        return id;
      };

      // Model chunk c of micro-batch m, on stage c mod stages.
      auto emit_forward = [&](int64_t m, int64_t c) {
        const int64_t s = c % stages;
        const std::string prefix = replica_prefix + "mb" + std::to_string(m) + "/";
        std::vector<std::vector<TaskId>> cells(ranks);
        std::vector<std::optional<TaskId>> gather_chain(ranks);
        for (OpId v : emitter.order()) {
          if (!emitter.selected(v) || static_cast<int64_t>(chunk_of[v]) != c) continue;
          const Op& op = graph.op(v);
          for (int64_t r = 0; r < simulated_ranks; ++r) {
            Task task = op_compute_task(shard[v], Phase::kForward, device(d, s, r), step, scale);
            task.name = prefix + "fwd/" + op.name + rank_name(r) + suffix;
            task.replica = replica;
            task.output_bytes = saved[v] * scale;  // what this op's backward will read
            for (const auto& input : graph.inputs(v)) {
              OpId u = input.op;
              if (!emitter.selected(u)) continue;
              const int64_t from = static_cast<int64_t>(stage_of[u]);
              if (input.edge.control || from == s) {
                task.deps.push_back(forward_ready[m][u][r]);
                continue;
              }
              const std::string tensor = "mb" + std::to_string(m) + "/" + graph.op(u).name;
              if (scatters(shard[u].output_bytes, graph.op(u).output_bytes)) {
                auto scattered = scattered_inputs[m].find({u, s});
                if (scattered == scattered_inputs[m].end()) {
                  scattered = scattered_inputs[m]
                                 .emplace(std::make_pair(u, s),
                                          scatter_gather(tensor, from, s, shard[u].output_bytes * scale,
                                                         [&](int64_t rank) { return forward_ready[m][u][rank]; },
                                                         prefix + "pp-allgather/" + graph.op(u).name + suffix,
                                                         graph.op(u).name))
                                 .first;
                }
                task.deps.push_back(scattered->second[static_cast<size_t>(r)]);
                continue;
              }
              auto key = std::make_tuple(u, s, r);
              auto it = received[m].find(key);
              if (it == received[m].end()) {
                TaskId id = emitter.transfer(tensor + rank_name(r), device(d, from, r), task.device,
                                             shard[u].output_bytes * scale, {forward_ready[m][u][r]}, step, replica,
                                             Phase::kTransfer);
                it = received[m].emplace(key, id).first;
              }
              task.deps.push_back(it->second);
            }
            if (held_bytes(v) > 0 && previous_update[d][v][r]) task.deps.push_back(*previous_update[d][v][r]);
            for (TaskId end : previous_slot_ends[d][s][r]) task.deps.push_back(end);
            if (gathers_parameters && held_bytes(v) > 0) {
              gather_chain[r] = gather(m, s, v, r, /*forward=*/true, &gather_chain[r]);
              task.deps.push_back(*gather_chain[r]);
              cells[r].push_back(*gather_chain[r]);
            }
            TaskId id = emitter.add(std::move(task));
            forward_task[m][v].push_back(id);
            cells[r].push_back(id);
          }
          forward_ready[m][v] = forward_task[m][v];
          if (roles[v] == TensorRole::kRow && ranks > 1) {
            // Megatron's g: the partial sums of a row-parallel output are all-reduced in forward.
            TaskId reduced = collective(prefix + "tp-allreduce/" + op.name + suffix, group_of(s),
                                        shard[v].output_bytes * scale, forward_task[m][v], step, op.name);
            forward_ready[m][v].assign(ranks, reduced);
            for (auto& cell : cells) cell.push_back(reduced);
          }
        }
        return cells;
      };

      auto emit_backward = [&](int64_t m, int64_t c) {
        const int64_t s = c % stages;
        const std::string prefix = replica_prefix + "mb" + std::to_string(m) + "/";
        std::vector<std::vector<TaskId>> cells(ranks);
        std::vector<std::optional<TaskId>> gather_chain(ranks);
        const auto& order = emitter.order();
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
          OpId v = *it;
          if (!emitter.needs_gradient(v) || static_cast<int64_t>(chunk_of[v]) != c) continue;
          const Op& op = graph.op(v);
          double input_gradient_bytes = 0;  // per rank, before any all-reduce
          double full_input_gradient_bytes = 0;
          for (const auto& input : graph.inputs(v)) {
            if (!emitter.needs_gradient(input.op) || input.edge.control) continue;
            input_gradient_bytes += tensor_parallel_edge_bytes(input.edge.bytes, roles[input.op], ranks) * scale;
            full_input_gradient_bytes += input.edge.bytes * scale;
          }
          for (int64_t r = 0; r < simulated_ranks; ++r) {
            Task task = op_compute_task(shard[v], Phase::kBackward, device(d, s, r), step, scale);
            if (task.kernel) task.kernel_passes = emitter.backward_kernel_passes(v);
            task.name = prefix + "bwd/" + op.name + rank_name(r) + suffix;
            task.replica = replica;
            bool waits_for_gradient = false;
            for (const auto& output : graph.outputs(v)) {
              OpId consumer = output.op;
              if (!emitter.selected(consumer) || output.edge.control || backward_ready[m][consumer].empty()) continue;
              waits_for_gradient = true;
              const int64_t from = static_cast<int64_t>(stage_of[consumer]);
              if (from == s) {
                task.deps.push_back(backward_ready[m][consumer][r]);
              } else {
                const std::string tensor = "mb" + std::to_string(m) + "/grad/" + op.name;
                const double bytes = tensor_parallel_edge_bytes(output.edge.bytes, roles[v], ranks) * scale;
                if (scatters(bytes, output.edge.bytes * scale)) {
                  auto key = std::make_pair(v, consumer);
                  auto gradient_gather = gathered_gradients[m].find(key);
                  if (gradient_gather == gathered_gradients[m].end()) {
                    gradient_gather =
                        gathered_gradients[m]
                            .emplace(key, scatter_gather(
                                              tensor, from, s, bytes,
                                              [&](int64_t rank) { return backward_ready[m][consumer][rank]; },
                                              prefix + "pp-allgather/grad/" + op.name + "/" + graph.op(consumer).name +
                                                  suffix,
                                              op.name))
                            .first;
                  }
                  task.deps.push_back(gradient_gather->second[static_cast<size_t>(r)]);
                } else {
                  task.deps.push_back(emitter.transfer(tensor + rank_name(r), device(d, from, r), task.device, bytes,
                                                       {backward_ready[m][consumer][r]}, step, replica,
                                                       Phase::kTransfer));
                }
              }
            }
            if (!run.recompute || !waits_for_gradient) task.deps.push_back(forward_task[m][v][r]);
            if (run.recompute || recomputed[v]) {
              task.flops += shard[v].forward_flops * scale;
              task.memory_bytes += shard[v].forward_bytes * scale;
              task.kernel_passes |= kForwardPass;
            }
            task.output_bytes = input_gradient_bytes;
            for (TaskId end : previous_slot_ends[d][s][r]) task.deps.push_back(end);
            if (gathers_parameters && held_bytes(v) > 0) {
              gather_chain[r] = gather(m, s, v, r, /*forward=*/false, &gather_chain[r]);
              task.deps.push_back(*gather_chain[r]);
              cells[r].push_back(*gather_chain[r]);
            }
            TaskId id = emitter.add(std::move(task));
            backward_task[m][v].push_back(id);
            cells[r].push_back(id);
            if (!run.recompute || holds_checkpoint[v]) emitter.at(forward_task[m][v][r]).keep_until.push_back(id);
          }
          backward_ready[m][v] = backward_task[m][v];
          if (roles[v] == TensorRole::kColumn && ranks > 1 && full_input_gradient_bytes > 0) {
            // Megatron's f: the gradient of a column-parallel op's replicated input is a partial
            // sum on every rank, all-reduced in backward.
            TaskId reduced = collective(prefix + "tp-allreduce/grad/" + op.name + suffix, group_of(s),
                                        full_input_gradient_bytes, backward_task[m][v], step, op.name);
            backward_ready[m][v].assign(ranks, reduced);
            for (auto& cell : cells) cell.push_back(reduced);
          }
        }
        return cells;
      };

      for (const auto& [stage, slot] : emission_order(schedule, micro_batches, chunks)) {
        const int64_t s = int64_t(stage);
        const int64_t c = slot.chunk * stages + s;
        const int64_t m = slot.micro_batch;
        std::vector<std::vector<TaskId>> cells = slot.forward ? emit_forward(m, c) : emit_backward(m, c);
        for (int64_t r = 0; r < simulated_ranks; ++r) {
          if (cells[r].empty()) continue;
          Task done;
          done.name = slot_marker(replica_prefix, m, slot.forward, s, r, ranks) +
                      (chunks > 1 ? "/chunk" + std::to_string(c) : std::string()) + suffix;
          done.phase = slot.forward ? Phase::kForward : Phase::kBackward;
          done.step = step;
          done.device = device(d, s, r);
          done.op_kind = OpKind::kNoOp;
          done.replica = replica;
          done.deps = cell_sinks(plan, cells[r]);
          const TaskId marker = emitter.add(std::move(done));
          previous_slot_ends[d][s][r] = {marker};
          if (cell_index && r == 0) (slot.forward ? cell_index->forward_done : cell_index->backward_done)[c] = marker;
        }
      }
      for (OpId v = 0; v < graph.size(); ++v) {
        if (!backward_task[micro_batches - 1][v].empty()) last_backward[d][v] = backward_task[micro_batches - 1][v];
      }
      // Interleaved: a stage reduces and updates its gradients once its whole schedule is done
      // (Megatron-LM without --overlap-grad-reduce), as its chunks finish at different times.
      for (OpId v = 0; chunks > 1 && v < graph.size(); ++v) {
        for (size_t r = 0; r < last_backward[d][v].size(); ++r) {
          last_backward[d][v][r] = previous_slot_ends[d][static_cast<int64_t>(stage_of[v])][r].front();
        }
      }
    }
    if (!training) continue;
    if (cell_index) cell_index->first_update_task = plan.tasks.size();

    // Gradients: accumulated over the micro-batches, all-reduced across replicas per (stage,
    // rank) in buckets in the order backward completes them, then one update per shard.
    std::map<std::tuple<int64_t, OpId, int64_t>, TaskId> reduced_tied;  // by (replica, op, rank)
    for (int64_t s = 0; s < stages; ++s) {
      for (int64_t r = 0; r < simulated_ranks; ++r) {
        std::vector<std::vector<OpId>> buckets;
        double bucket_bytes = 0;
        const auto& order = emitter.order();
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
          OpId v = *it;
          if (static_cast<int64_t>(stage_of[v]) != s || held_bytes(v) <= 0 || last_backward[0][v].empty()) {
            continue;
          }
          if (buckets.empty() || bucket_bytes >= options.bucket_bytes) {
            buckets.emplace_back();
            bucket_bytes = 0;
          }
          buckets.back().push_back(v);
          bucket_bytes += held_bytes(v);
        }
        for (size_t b = 0; b < buckets.size(); ++b) {
          std::vector<TaskId> gradient_ready;
          for (int64_t d = 0; d < simulated_replicas; ++d) {
            for (OpId v : buckets[b]) gradient_ready.push_back(last_backward[d][v][r]);
          }
          // Per replica: what its updates of the bucket wait for.
          std::vector<TaskId> reduced_for(static_cast<size_t>(simulated_replicas));
          if (replicas > 1) {
            const std::vector<DeviceId> group = layout.data_group(s, r);
            double bytes = 0;
            for (OpId v : buckets[b]) bytes += held_bytes(v);
            if (previous_data_collective[s][r]) gradient_ready.push_back(*previous_data_collective[s][r]);
            const std::string where =
                "stage" + std::to_string(s) + (ranks > 1 ? "/tp" + std::to_string(r) : "") + "/bucket" + std::to_string(b) + suffix;
            const std::string& op_name = graph.op(buckets[b].front()).name;
            if (options.zero_stage == 0 || shards == replicas) {
              // Plain data parallelism and ZeRO 1/2 all-reduce (ZeRO 1/2: a reduce-scatter and, after
              // the shard's update, an all-gather: the same bytes); ZeRO 3 only reduce-scatters
              // (parameters are gathered again before the next forward).
              TaskId reduced = options.zero_stage >= 3
                                   ? collective("zero3-reduce-scatter/" + where, group, bytes, gradient_ready, step, op_name,
                                                CollectiveKind::kReduceScatter)
                                   : collective("dp-allreduce/" + where, group, bytes, gradient_ready, step, op_name);
              previous_data_collective[s][r] = reduced;
              reduced_for.assign(reduced_for.size(), reduced);
            } else {
              // Hybrid sharding: reduce-scatter inside each shard group, then all-reduce each 1/shards
              // shard across the groups.
              std::vector<TaskId> scattered;
              for (int64_t k = 0; k < (symmetric ? 1 : replicas / shards); ++k) {
                scattered.push_back(collective("zero3-reduce-scatter/group" + std::to_string(k) + "/" + where,
                                               layout.shard_group(k * shards, s, r), bytes, gradient_ready, step, op_name,
                                               CollectiveKind::kReduceScatter));
              }
              std::vector<TaskId> across;
              for (int64_t j = 0; j < (symmetric ? 1 : shards); ++j) {
                across.push_back(collective("hybrid-allreduce/shard" + std::to_string(j) + "/" + where,
                                            layout.cross_group(j, s, r), bytes / static_cast<double>(shards), scattered, step,
                                            op_name));
              }
              previous_data_collective[s][r] = across.back();
              for (int64_t d = 0; d < simulated_replicas; ++d) reduced_for[static_cast<size_t>(d)] = across[static_cast<size_t>(d % shards)];
            }
          }
          for (int64_t d = 0; d < simulated_replicas; ++d) {
            for (OpId v : buckets[b]) {
              TaskId after = replicas > 1 ? reduced_for[static_cast<size_t>(d)] : last_backward[d][v][r];
              if (tied[v]) {  // updated after the tied all-reduce, below
                reduced_tied[{d, v, r}] = after;
                continue;
              }
              // ZeRO 1-3: each replica updates its 1/shards of the optimizer state only.
              Op updated = holder(v);
              if (options.zero_stage >= 1) updated.parameter_count /= static_cast<double>(shards);
              Task update = optimizer_task(updated, run.optimizer, device(d, s, r), step, replicas > 1 ? d : -1, after);
              update.name += ranks > 1 ? "/tp" + std::to_string(r) : "";
              previous_update[d][v][r] = emitter.add(std::move(update));
            }
          }
        }
      }
    }
    // Tied weights: the two stages' copies of the gradient summed, then both copies updated.
    for (const auto& [reader, owner] : ties) {
      const int64_t owner_stage = static_cast<int64_t>(stage_of[owner]), reader_stage = static_cast<int64_t>(stage_of[reader]);
      const double bytes = held_bytes(owner) / static_cast<double>(options.zero_stage >= 2 ? shards : 1);
      for (int64_t d = 0; d < simulated_replicas; ++d) {
        for (int64_t r = 0; r < simulated_ranks; ++r) {
          std::vector<TaskId> deps;
          for (OpId v : {owner, reader}) {
            auto it = reduced_tied.find({d, v, r});
            deps.push_back(it != reduced_tied.end() ? it->second : last_backward[d][v][r]);
          }
          const TaskId reduced = collective((replicas > 1 ? StepEmitter::prefix(d) : std::string()) + "tied-allreduce/" +
                                                graph.op(owner).name + (ranks > 1 ? "/tp" + std::to_string(r) : "") + suffix,
                                            {device(d, owner_stage, r), device(d, reader_stage, r)}, bytes, deps, step,
                                            graph.op(owner).name);
          for (OpId v : {owner, reader}) {
            Op updated = holder(v);
            if (options.zero_stage >= 1) updated.parameter_count /= static_cast<double>(shards);
            Task update = optimizer_task(updated, run.optimizer, device(d, static_cast<int64_t>(stage_of[v]), r), step,
                                         replicas > 1 ? d : -1, reduced);
            update.name += ranks > 1 ? "/tp" + std::to_string(r) : "";
            previous_update[d][v][r] = emitter.add(std::move(update));
          }
        }
      }
    }
  }
  if (symmetric && !cell_index) describe_symmetry(cluster, options, tied_stages, &plan, notes);
  return plan;
}

}  // namespace

ExecutionPlan build_parallel_3d_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                     const ParallelismOptions& options, const std::string& name,
                                     std::vector<std::string>* notes) {
  return build_plan(graph, cluster, run, options, name, notes, nullptr);
}

ExecutionPlan build_parallel_3d_cell_plan(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                          const ParallelismOptions& options, PipelineCells* cells) {
  return build_plan(graph, cluster, run, options, "cells", nullptr, cells);
}

}  // namespace placesim
