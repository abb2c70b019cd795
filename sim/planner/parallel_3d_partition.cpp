#include "sim/planner/parallel_3d_partition.h"

#include <algorithm>
#include <map>

#include "sim/core/glob.h"
#include "sim/spec/spec_error.h"
#include "sim/planner/context_parallel.h"
#include "sim/planner/memory_model.h"
#include "sim/planner/pipeline_builder.h"

namespace placesim {

Op Parallel3dPartition::holder(OpId v, const OpGraph& graph) const {
  if (!copy_of[v]) return shard[v];
  Op copy = shard[*copy_of[v]];
  copy.name = graph.op(v).name;
  return copy;
}

bool Parallel3dPartition::runs(OpId v, int64_t replica) const {
  if (!expert_op(v)) return true;
  const auto experts_per_rank =
      static_cast<int64_t>(experts.layers[static_cast<size_t>(experts.layer_of[v])].dispatches.size()) / expert_ranks;
  return experts.expert_of[v] / experts_per_rank == expert_rank(replica);
}

double Parallel3dPartition::held_bytes(OpId v) const {
  return copy_of[v] ? shard[*copy_of[v]].parameter_bytes() : shard[v].parameter_bytes();
}

namespace {

/// The layers named `<prefix>.<index>` (the zoo's transformer blocks `h.0`, `h.1`, ...; an op's
/// `layer` field) of the emitter's selected ops, each with its position in the order the graph
/// reaches them; empty when there are none or they do not share one prefix.
std::map<std::string, size_t> numbered_blocks(const OpGraph& graph, const StepEmitter& emitter) {
  std::map<std::string, size_t> blocks;
  std::string prefix;
  for (OpId v : emitter.order()) {
    if (!emitter.selected(v)) continue;
    const std::string& layer = graph.op(v).layer;
    const std::string_view layer_prefix = numbered_layer_prefix(layer);
    if (layer_prefix.empty()) continue;
    if (prefix.empty()) prefix = layer_prefix;
    if (layer_prefix != prefix) return {};
    blocks.emplace(layer, blocks.size());
  }
  return blocks;
}

/// "stage_split": "layers": numbered layer k (of n) on model chunk k / (n / chunks), every other
/// op unassigned (complete_pipeline_stages then puts inputs and embedding with their consumers
/// on the first chunk, the final norm, logits and loss with their predecessors on the last).
std::vector<size_t> whole_layer_seeds(const OpGraph& graph, const StepEmitter& emitter,
                                       const ParallelismOptions& options, int64_t model_chunks) {
  const std::map<std::string, size_t> blocks = numbered_blocks(graph, emitter);
  const int64_t count = static_cast<int64_t>(blocks.size());
  const std::string path = "parallelism/stage_split";
  if (count == 0) {
    throw SpecError::strategy(path, "\"layers\" needs numbered layers (ops of layers named like \"h.0\", \"h.1\"); this graph has none");
  }
  if (count % model_chunks != 0) {
    const std::string into = options.virtual_stages > 1
                                 ? std::to_string(model_chunks) + " model chunks (pipeline " +
                                       std::to_string(options.pipeline) + " x virtual_stages " +
                                       std::to_string(options.virtual_stages) + ")"
                                 : std::to_string(options.pipeline) + " pipeline stages";
    throw SpecError::strategy(path, "the model's " + std::to_string(count) + " layers do not split evenly into " + into +
                                   ": \"layers\" gives each the same number of whole layers (or use \"compute\")");
  }
  const size_t per_chunk = static_cast<size_t>(count / model_chunks);
  std::vector<size_t> chunk_of(graph.size(), kUnassignedStage);
  for (OpId v = 0; v < graph.size(); ++v) {
    if (auto it = blocks.find(graph.op(v).layer); it != blocks.end()) chunk_of[v] = it->second / per_chunk;
  }
  return chunk_of;
}

/// Expert parallelism's conditions, the MoE layers and the bytes of their all-to-alls.
void find_expert_layers(const OpGraph& graph, const ParallelismOptions& options, const Parallel3dLayout& layout,
                        Parallel3dPartition* p) {
  const std::string path = "parallelism/expert";
  const int64_t group = options.expert;
  if (const std::string problem = options.expert_groups_problem(); !problem.empty()) {
    throw SpecError::strategy(path, problem);
  }
  if (options.zero_stage >= 1) {
    // An expert's shards divide over its holders inside one shard group: each shard group must
    // hold every expert rank it holds equally often (as when one of the expert group and the
    // shard group divides the other), so that every expert's shard is the same size.
    const std::vector<int64_t> sizes = layout.expert_shard_places().group_size;
    p->expert_shards = options.expert_zero_shards();  // replica 0's group, sizes.front()
    if (std::any_of(sizes.begin(), sizes.end(), [&](int64_t size) { return size != p->expert_shards; })) {
      throw SpecError::strategy(path, "FSDP's hybrid sharding groups " + std::to_string(options.zero_shards()) +
                                          " replicas, which hold the " + std::to_string(group) +
                                          " ranks of an expert group unequally (an expert's shards would differ "
                                          "in size); give an expert group that divides the shard group or a "
                                          "multiple of it");
    }
  }
  p->experts = find_expert_branches(graph);
  if (p->experts.layers.empty()) {
    throw SpecError::strategy(path, "expert parallelism needs a mixture-of-experts model (MoeDispatch and MoeCombine "
                                    "ops, as the zoo's mixtral_8x7b has); \"" + graph.name() + "\" has none");
  }
  for (const MoeLayer& layer : p->experts.layers) {
    const auto experts = static_cast<int64_t>(layer.dispatches.size());
    if (experts % group != 0) {
      throw SpecError::strategy(path, "an expert group of " + std::to_string(group) + " ranks does not divide the " +
                                          std::to_string(experts) + " experts of \"" + graph.op(layer.combine).name +
                                          "\": each rank must hold the same number of whole experts");
    }
    p->expert_exchange.push_back(expert_exchange_bytes(graph, layer, options.tensor, options.context));
  }
  p->expert_ranks = group;
}

/// Expert parallelism: every op of a MoE layer (its dispatches, experts and combine) on its
/// combine's model chunk, so that the layer's all-to-alls run within one stage. Moving ops to a
/// later chunk keeps every edge pointing forward: an op's inputs were on its chunk or before,
/// and the layer's outputs leave from the combine.
void keep_moe_layers_whole(const OpGraph& graph, const Parallel3dPartition& p, int64_t model_chunks,
                           std::vector<size_t>* chunk_of) {
  for (size_t l = 0; l < p.experts.layers.size(); ++l) {
    const MoeLayer& layer = p.experts.layers[l];
    const size_t chunk = (*chunk_of)[layer.combine];
    for (OpId dispatch : layer.dispatches) (*chunk_of)[dispatch] = chunk;
    for (OpId v = 0; v < graph.size(); ++v) {
      if (p.experts.layer_of[v] == static_cast<int64_t>(l)) (*chunk_of)[v] = chunk;
    }
  }
  std::vector<size_t> ops(static_cast<size_t>(model_chunks), 0);
  for (size_t chunk : *chunk_of) {
    if (chunk < ops.size()) ++ops[chunk];
  }
  for (size_t c = 0; c < ops.size(); ++c) {
    if (ops[c] == 0) {
      throw SpecError::strategy("parallelism/expert",
                                "each mixture-of-experts layer runs on one pipeline stage with expert parallelism, "
                                "which leaves model chunk " + std::to_string(c) +
                                    " without ops: use fewer stages or \"stage_split\": \"layers\"");
    }
  }
}

}  // namespace

Parallel3dPartition partition_parallel_3d(const OpGraph& graph, const RunOptions& run, const ParallelismOptions& options,
                                          const StepEmitter& emitter, const Parallel3dLayout& layout,
                                          std::vector<std::string>* notes) {
  const int64_t stages = options.pipeline;
  const int64_t ranks = options.tensor;
  const int64_t chunks = options.virtual_stages;
  const int64_t model_chunks = stages * chunks;
  Parallel3dPartition p;

  // Which ops the tensor groups split, and what one rank of a group runs.
  p.roles = tensor_parallel_roles(graph, options.column_parallel, options.row_parallel);
  if (options.sequence_parallel && ranks > 1) use_sequence_parallelism(&p.roles);
  p.shard.resize(graph.size());
  p.saved.resize(graph.size());
  p.gathered_key_values.assign(graph.size(), 0);
  const int64_t context = options.context;
  p.context_ranks = context;
  if (options.expert > 1) find_expert_layers(graph, options, layout, &p);
  if (options.tensor_comm_overlap && ranks > 1) {
    for (OpId v = 0; v < graph.size(); ++v) {
      if (graph.op(v).type != "MoeDispatch") continue;
      throw SpecError::strategy("parallelism/tp_comm_overlap",
                                "overlapping sequence parallelism's collectives with the GEMMs is modelled for dense "
                                "layers only; \"" + graph.name() + "\" routes tokens to experts (op \"" +
                                    graph.op(v).name + "\"): leave \"tp_comm_overlap\" out");
    }
  }
  // Selective recomputation (Korthikanti et al. 2022, section 5): the core attention's ops keep
  // nothing made among them and re-run their forward in backward.
  p.recomputed.assign(graph.size(), false);
  if (!options.selective_recompute.empty()) {
    if (run.recompute) {
      throw SpecError::strategy("parallelism/selective_recompute",
                       "selective recomputation and run.recompute (full) both asked for: choose one");
    }
    const std::vector<GlobPattern> recomputed = glob_patterns(options.selective_recompute);
    for (OpId v = 0; v < graph.size(); ++v) p.recomputed[v] = matches_any(recomputed, graph.op(v).name);
  }
  for (OpId v : emitter.order()) {
    const Op& op = graph.op(v);
    const int64_t heads = attention_heads(op);
    const bool splits_heads = p.roles[v] != TensorRole::kReplicated && p.roles[v] != TensorRole::kSequence;
    if (ranks > 1 && heads > 0 && splits_heads && heads % ranks != 0) {
      throw SpecError::strategy("parallelism/tensor",
                       "a tensor-parallel group of " + std::to_string(ranks) + " does not divide the " +
                           std::to_string(heads) + " attention heads of \"" + op.name +
                           "\": each rank must hold whole heads");
    }
    p.shard[v] = tensor_parallel_shard(op, p.roles[v], ranks);
    p.saved[v] = saved_activation_bytes(graph, p.roles, ranks, v,
                                        options.selective_recompute.empty() ? nullptr : &p.recomputed);
    if (context > 1 && heads > 0 && attention_queries(op) % (2 * context) != 0) {
      throw SpecError::strategy("parallelism/context",
                                "a context group of " + std::to_string(context) + " splits each sequence into " +
                                    std::to_string(2 * context) + " chunks (two per rank, balancing the causal mask), but \"" +
                                    op.name + "\" attends over " + std::to_string(attention_queries(op)) +
                                    " tokens, not a multiple of " + std::to_string(2 * context));
    }
    if (context > 1) {
      // Each context rank runs 1/c of the tokens and keeps 1/c of the activations; the keys and
      // values it gathers are the whole sequence's, split over the tensor ranks with the heads.
      p.shard[v] = context_parallel_shard(p.shard[v], context);
      p.saved[v] /= static_cast<double>(context);
      p.gathered_key_values[v] = attention_key_value_bytes(graph, v) / static_cast<double>(splits_heads ? ranks : 1);
    }
    if (p.expert_op(v)) {  // the tokens the whole expert group routed to this rank's experts
      p.shard[v] = expert_parallel_shard(p.shard[v], p.expert_ranks);
      p.saved[v] *= static_cast<double>(p.expert_ranks);
    }
    p.split_ops += p.roles[v] != TensorRole::kReplicated;
  }
  // With recomputation, an op that reads a tensor from another layer (memory_model.h,
  // crosses_layers) keeps what its backward reads until that backward, as without: it holds the
  // checkpoint its layer is recomputed from (in a GPT layer, ln_1's saved input: 2 s b h bytes
  // in fp16). Every other forward buffer is freed once its consumers' forwards end.
  p.holds_checkpoint.assign(graph.size(), false);
  for (OpId v : emitter.order()) {
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && emitter.selected(input.op) && crosses_layers(graph, input.op, v)) {
        p.holds_checkpoint[v] = true;
      }
    }
  }

  // chunk_of[v]: the model chunk of op v (its stage without interleaving); stage_of[v]: the
  // pipeline stage that runs it.
  PipelineOptions stage_options;
  for (int64_t c = 0; c < model_chunks; ++c) stage_options.devices.push_back(layout.device(0, c % stages, 0));
  // PipeDream's replicated stages: each stage's share of the compute is its replicas' share.
  for (int64_t width : options.stage_replicas) stage_options.stage_weights.push_back(static_cast<double>(width));
  for (size_t s = 0; s < options.stage_ops.size(); ++s) {  // given by hand
    stage_options.stages.push_back({options.stage_ops[s], stage_options.devices[s]});
  }
  const std::string split_path = chunks > 1                    ? "parallelism/virtual_stages"
                                 : !options.stage_ops.empty() ? "parallelism/stage_ops"
                                                              : "parallelism/pipeline";
  const std::string interleaving =
      chunks > 1 ? "virtual_stages " + std::to_string(chunks) + " splits the model into pipeline " +
                       std::to_string(stages) + " x " + std::to_string(chunks) + " = " + std::to_string(model_chunks) +
                       " chunks"
                 : std::string();
  if (chunks > 1) {
    int64_t compute_ops = 0;
    for (OpId v = 0; v < graph.size(); ++v) compute_ops += graph.op(v).forward_flops + graph.op(v).backward_flops > 0;
    if (compute_ops < model_chunks) {
      throw SpecError::strategy(split_path, interleaving + ", but the graph has only " + std::to_string(compute_ops) +
                                           " ops with FLOPs to split: use fewer virtual stages");
    }
  }
  std::vector<size_t> seeds;
  if (options.whole_layer_stages) seeds = whole_layer_seeds(graph, emitter, options, model_chunks);
  try {
    p.chunk_of = options.whole_layer_stages
                     ? complete_pipeline_stages(graph, std::move(seeds), static_cast<size_t>(model_chunks))
                     : assign_pipeline_stages(graph, stage_options);
  } catch (const SpecError& error) {
    throw SpecError::strategy(split_path, (chunks > 1 ? interleaving + ": " : std::string()) + error.message());
  }
  if (p.expert_ranks > 1) keep_moe_layers_whole(graph, p, model_chunks, &p.chunk_of);
  p.stage_of.resize(p.chunk_of.size());
  for (OpId v = 0; v < graph.size(); ++v) p.stage_of[v] = p.chunk_of[v] % static_cast<size_t>(stages);

  // Tied weights on different stages (Megatron's shared word embedding, Narayanan et al. 2021,
  // section 3.2 of the Megatron-LM code's "embedding group"): the reader's stage holds a copy of
  // the owner's shard, and after the data-parallel reduction the two copies' gradients are
  // all-reduced between the stages before either is updated.
  p.copy_of.resize(graph.size());
  p.tied.assign(graph.size(), false);
  for (const auto& [reader_name, owner_name] : options.tied_weights) {
    const OpId reader = graph.find(reader_name), owner = graph.find(owner_name);
    if (reader >= graph.size() || owner >= graph.size() || !emitter.selected(reader) || !emitter.selected(owner) ||
        p.stage_of[reader] == p.stage_of[owner] || p.shard[owner].parameter_count <= 0 ||
        graph.op(reader).parameter_count > 0) {  // a reader with weights of its own is not tied
      continue;
    }
    p.copy_of[reader] = owner;
    p.tied[reader] = p.tied[owner] = true;
    p.ties.emplace_back(reader, owner);
    p.tied_stages.emplace_back(static_cast<int64_t>(p.stage_of[owner]), static_cast<int64_t>(p.stage_of[reader]));
    if (notes) {
      notes->push_back("tied weights: " + graph.op(reader).name + " (stage " + std::to_string(p.stage_of[reader]) +
                       ") holds a copy of " + owner_name + " (stage " + std::to_string(p.stage_of[owner]) +
                       "); their gradients are all-reduced between the two stages");
    }
  }
  return p;
}

}  // namespace placesim
