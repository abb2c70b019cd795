// Strategy: how a scenario runs its model on the cluster — the placement rules of one replica
// and, optionally, data parallelism (replicas, sync or async, parameter servers or all-reduce).
// A scenario holds one or more strategies; `placesim run` compares them side by side.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/spec/collective_algorithm.h"
#include "sim/spec/framework.h"

namespace placesim {

/// A tf.device-like rule: ops whose name matches `ops` (a glob: * and ?) go to `device`.
struct PlacementRule {
  std::string ops;
  std::string device;
  size_t index = 0;  ///< the rule's place in the strategy's "rules" (one rule may give several op patterns)
};

/// Automatic placement algorithms (docs/placement.md): Baechi's memory-constrained m-TOPO,
/// m-ETF and m-SCT (Jeon et al., SoCC 2020) and an expert contiguous split balanced by compute.
enum class PlacementAlgorithm { kExpert, kMTopo, kMEtf, kMSct };

/// "placement": {"auto": {...}}: the placer chooses every op's device under a memory limit.
struct AutoPlacementOptions {
  PlacementAlgorithm algorithm = PlacementAlgorithm::kMEtf;
  /// Share of each device's memory the placer may fill (Baechi's experiments cap it too).
  double memory_fraction = 1.0;
  std::vector<DeviceId> devices;  ///< devices the placer may use; empty = all
};

struct PlacementOptions {
  std::optional<AutoPlacementOptions> automatic;  ///< set: rules are not used
  std::vector<PlacementRule> rules;  ///< first matching rule wins
  bool allow_soft_placement = false;
};

enum class SyncMode { kSync, kAsync };
enum class Aggregation { kParameterServer, kAllReduce };
/// How variables are spread over parameter servers: TensorFlow's replica_device_setter
/// default (round robin in creation order) or its greedy load balancing by size.
enum class Sharding { kRoundRobin, kGreedy };

/// DataParallelOptions::bucket_bytes for one gradient all-reduce per op with weights.
inline constexpr double kOneBucketPerOp = 0;
/// PyTorch DDP's default bucket_cap_mb = 25.
inline constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;

/// Horovod's Tensor Fusion threshold since v0.21 (horovod/horovod 3ffe479e, 2020-11-19: "Changed
/// default cycle time from 5ms to 1ms and fusion threshold from 64MB to 128MB"); 64 MiB before
/// (f3658ee6, 2017: tensor_fusion_threshold = 64 * 1024 * 1024), which a scenario of an older
/// run sets as its bucket_bytes.
inline constexpr double kHorovodFusionBytes = 128.0 * 1024 * 1024;

/// How a framework groups data-parallel gradients when the scenario says nothing: TensorFlow 1.x
/// all-reduces each variable on its own (tensorflow/benchmarks fd87986, tf_cnn_benchmarks'
/// variable_mgr.py sum_gradients_all_reduce: one nccl.all_sum per variable; its NcclManager runs
/// one collective at a time), Horovod fuses up to its threshold, the others fill PyTorch DDP's
/// 25 MiB buckets.
inline double default_bucket_bytes(Framework framework) {
  if (framework == Framework::kTensorFlow1) return kOneBucketPerOp;
  return framework == Framework::kHorovod ? kHorovodFusionBytes : kDdpBucketBytes;
}

/// Whether a gradient group holding `group_bytes` takes the next gradient, of `next_bytes`, in
/// the order backward produces them. PyTorch DDP's buckets close once they hold `cap_bytes` (the
/// last gradient may overshoot it: torch.distributed's _compute_bucket_assignment_by_size);
/// Horovod fuses while the fused size stays within its threshold, and a gradient larger than it
/// is reduced alone (horovod f3658ee6 mpi_ops.cc: the coordinator leaves out a response that
/// would overflow the fusion buffer); kOneBucketPerOp: every op alone.
inline bool joins_gradient_group(Framework framework, double group_bytes, double next_bytes, double cap_bytes) {
  if (framework == Framework::kHorovod) return group_bytes + next_bytes <= cap_bytes;
  return group_bytes < cap_bytes;
}

struct DataParallelOptions {
  std::vector<DeviceId> replicas;  ///< one worker per device, each on its own slice of the batch
  SyncMode mode = SyncMode::kSync;
  Aggregation aggregation = Aggregation::kAllReduce;
  std::vector<DeviceId> parameter_servers;  ///< for kParameterServer
  Sharding sharding = Sharding::kRoundRobin;
  std::optional<CollectiveAlgorithm> algorithm;  ///< nullopt = auto (chosen per bucket)
  /// Gradients fused per all-reduce: a bucket closes once it holds this many bytes (PyTorch
  /// DDP's default bucket_cap_mb = 25), or under Horovod holds at most this many
  /// (joins_gradient_group); kOneBucketPerOp: one all-reduce per op with weights (TensorFlow
  /// 1.x's per-variable all-reduces, the default under its framework).
  double bucket_bytes = kDdpBucketBytes;
  bool overlap = true;  ///< start each bucket's all-reduce as soon as backward produced it
  /// Parameter servers only: sum gradients inside each machine first (an all-reduce among its
  /// replicas) and exchange one copy per machine with the servers, as TensorFlow's
  /// distributed_replicated mode does.
  bool local_aggregation = false;
  /// The framework's transports (gRPC parameter servers, NCCL collectives, ...).
  CommunicationOptions communication;
};

enum class PipelineSchedule { kGpipe, kOneFOneB };

/// One pipeline stage given by hand: the ops whose names match `ops` (globs), on `device`.
struct PipelineStage {
  std::vector<std::string> ops;
  DeviceId device = 0;
};

/// Pipeline parallelism (docs/pipeline-parallel.md): the graph split into contiguous stages,
/// one per device, each step's batch split into `micro_batches`.
struct PipelineOptions {
  std::vector<PipelineStage> stages;  ///< given by hand; empty: `devices.size()` stages balanced by compute
  std::vector<DeviceId> devices;      ///< one per stage, in stage order
  int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  /// Balanced by compute: each stage's share of it, relative (PipeDream's replicated stages: its
  /// replicas); empty = equal shares.
  std::vector<double> stage_weights;
};

/// Data x pipeline x context x tensor parallelism (docs/tensor-parallel.md,
/// docs/llm-planning.md): `data` replicas of a pipeline of `pipeline` stages, each stage's
/// sequence split over `context` ranks (context parallelism) and each of those split over a
/// tensor-parallel group of `tensor` devices. Context ranks hold whole copies of their stage's
/// weights, as data-parallel replicas do, so the planner numbers them with the replicas:
/// replica q = d * context + k is context rank k of data replica d. The device of (replica q,
/// stage s, rank r) is devices[((d * pipeline + s) * context + k) * tensor + r]: tensor groups are
/// consecutive devices (inside one machine), context groups next, then stages, data replicas
/// outermost, the order of the Llama 3 paper's figure 5 ([TP, CP, PP, DP]).
struct ParallelismOptions {
  int64_t tensor = 1;
  int64_t pipeline = 1;
  int64_t data = 1;
  /// Context parallelism (Llama 3 paper, section 3.3.2): each sequence split into `context`
  /// load-balanced chunks, one per rank; K and V all-gathered before each attention and their
  /// gradients reduce-scattered after it (context_parallel.h). 1 = off.
  int64_t context = 1;
  /// Expert parallelism (expert_parallel.h): each mixture-of-experts layer's experts spread over
  /// groups of `expert` data-parallel replicas, all-to-all dispatch and combine between them. It
  /// divides `data` and takes no devices of its own. 1 = every replica holds every expert.
  int64_t expert = 1;
  std::vector<DeviceId> devices;  ///< data * pipeline * context * tensor, in the order device() reads
  /// How `devices` is read: false = [TP, CP, PP, DP] (the Llama 3 paper's figure 5: data
  /// replicas outermost); true = [TP, CP, DP, PP] (Megatron-Core's default "tp-cp-ep-dp-pp":
  /// stages outermost, so that neighbouring replicas, and with them expert groups, share a machine).
  bool pipeline_outermost = false;
  int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  /// PipeDream's asynchronous pipeline (Narayanan et al. SOSP 2019; `"schedule": "pipedream"`):
  /// 1F1B without flushes, every stage updating its weights after each micro-batch's backward,
  /// with weight stashing (a micro-batch's forward and backward at a stage use one weight version).
  /// The steps of a run form one continuous schedule. `schedule` stays kOneFOneB.
  bool asynchronous = false;
  /// With `asynchronous`: PipeDream-2BW (Narayanan et al. ICML 2021, "Memory-Efficient
  /// Pipeline-Parallel DNN Training"; `"schedule": "pipedream-2bw"`): each stage accumulates its
  /// gradients over a step's `micro_batches` (at least `pipeline`) and updates once per step, so
  /// at most two weight versions are in use at once (double-buffered weights).
  bool double_buffered = false;
  /// PipeDream's replicated stages (Narayanan et al. SOSP 2019, section 3.1: "15-1"): stage s
  /// runs on stage_replicas[s] replicas of `tensor` devices each; empty = every stage on `data`.
  /// `data` is then the largest width, which every width divides: the schedule runs `data`
  /// streams of micro-batches, stream d on stage s's replica d mod stage_replicas[s] (round
  /// robin), so a narrower stage's replica serves data / width streams in turn. `devices` are read
  /// stage by stage: stage 0's replicas (each `tensor` consecutive devices), then stage 1's.
  std::vector<int64_t> stage_replicas;
  /// `"stage_replicas": "auto"` as read, before sim/session/automatic_stages.h resolves it into
  /// stage_replicas, stage_ops, pipeline and data with PipeDream's partitioner: the number of
  /// stages to cut into (`"pipeline"`), 0 = the partitioner's choice. `data` holds the replicas
  /// to partition (one per device) and `pipeline` 1 until then.
  std::optional<int64_t> automatic_stages;
  /// The ops of each stage given by hand: per stage, op-name globs (an op takes the first stage
  /// one of whose globs matches it; one no glob matches joins its first consumer's stage, or its
  /// predecessor's: assign_pipeline_stages). Empty = split by `whole_layer_stages`' rule.
  std::vector<std::vector<std::string>> stage_ops;
  /// Model chunks per pipeline stage (interleaved 1F1B, pipeline_builder.h): the model is split
  /// into pipeline x virtual_stages chunks, chunk c on stage c mod pipeline. 1 = plain 1F1B/GPipe.
  int64_t virtual_stages = 1;
  bool sequence_parallel = false;  ///< replicated ops on 1/t of the sequence (tensor_parallel.h)
  /// Transformer Engine's userbuffers overlap of sequence parallelism's collectives with the
  /// GEMMs beside them (Megatron-LM's --tp-comm-overlap, NeMo's ub_tp_comm_overlap); needs
  /// sequence_parallel. docs/tensor-parallel.md, "Communication overlapped with the GEMMs".
  bool tensor_comm_overlap = false;
  /// How the model is cut into pipeline stages (model chunks with interleaving): false = balanced
  /// by compute, op by op (a cut may fall inside a layer); true = whole layers, as Megatron-LM
  /// and DeepSpeed's `type:transformer` partition assign them: the numbered blocks (`h.0`,
  /// `h.1`, ...) split evenly over the chunks, what comes before the first block (inputs,
  /// embedding) on the first, what follows the last (final norm, head, loss) on the last.
  bool whole_layer_stages = false;
  /// Megatron's scatter/gather between pipeline stages (Narayanan et al. SC'21, section 4.1): a
  /// tensor every rank holds whole is sent as 1/t per rank and all-gathered over the receiving
  /// stage's tensor group. On by default, as in Megatron-LM and DeepSpeed's pipeline engine.
  bool scatter_gather = true;
  /// Selective recomputation: these ops (globs) keep no activations made among them and re-run
  /// their forward in backward; empty = off.
  std::vector<std::string> selective_recompute;
  std::vector<std::string> column_parallel;  ///< op-name globs (tensor_parallel.h)
  std::vector<std::string> row_parallel;
  std::optional<CollectiveAlgorithm> algorithm;  ///< of every all-reduce; nullopt = auto
  /// Data-parallel gradient buckets (default_bucket_bytes of the framework; joins_gradient_group).
  double bucket_bytes = kDdpBucketBytes;
  /// ZeRO over the data-parallel group (Rajbhandari et al. 2020; docs/llm-planning.md): 0 = none,
  /// 1 shards the optimizer state, 2 also the gradients, 3 also the parameters (FSDP full shard).
  int zero_stage = 0;
  /// Replicas each ZeRO shard group spans: 0 = all `data` (ZeRO, FSDP full sharding); fewer (FSDP
  /// hybrid sharding: the replicas inside one machine), the groups all-reducing their shards.
  int64_t shard_group = 0;
  /// Weights one op reads and another owns (the `gpt` logits and the token embedding): when the
  /// two ops fall on different pipeline stages, the reader's stage holds a copy, and the copies'
  /// gradients are all-reduced between the two stages before the update. Pairs of exact op names
  /// (reader, owner); empty = none.
  std::vector<std::pair<std::string, std::string>> tied_weights;
  /// The framework's transports for every collective of the plan (tensor, data, expert,
  /// context, ZeRO and the pipeline's gathers): NCCL's, with its wire efficiency across machines
  /// and its share of the GPUs it overlaps. "links" (the default) charges the links only.
  CommunicationOptions communication;

  /// The replicas that hold whole copies of a stage's weights and reduce their gradients
  /// together: every context rank of every data replica (Megatron-LM's data-parallel group
  /// "with CP"). The planner's replica index runs over these.
  int64_t replicas() const { return data * context; }
  /// The replicas a ZeRO shard is divided over (1 without ZeRO).
  int64_t zero_shards() const {
    return zero_stage == 0 ? 1 : shard_group > 0 && shard_group < replicas() ? shard_group : replicas();
  }

  /// Why the replicas cannot form expert groups (each `expert` consecutive data replicas, so
  /// `expert` must divide `data`), or "" when they can. The planner refuses such a layout with
  /// it, and the sweep's search screen, which sizes a layout's data width without planning it, too.
  std::string expert_groups_problem() const {
    if (data % expert == 0) return "";
    return "an expert group of " + std::to_string(expert) + " data-parallel replicas must divide the data-parallel size " +
           std::to_string(data);
  }
  /// The holders of replica 0's experts in its ZeRO shard group: the replicas an expert's
  /// optimizer state (ZeRO 1), gradients (2) and parameters (3) divide over, where a dense op's
  /// divide over zero_shards(); 1 without ZeRO, zero_shards() with expert 1 (every replica
  /// holds every expert). Replica q holds expert rank (q / context) mod expert.
  int64_t expert_zero_shards() const {
    if (zero_stage == 0) return 1;
    // Replicas 0..S-1 run in cycles of context x expert, each holding rank 0 in its first
    // `context`; a partial last cycle holds it in up to `context` more.
    const int64_t shards = zero_shards(), cycle = context * expert;
    return shards / cycle * context + std::min(shards % cycle, context);
  }
  /// The replicas stage `stage` runs on: its stage_replicas width, else replicas().
  int64_t stage_width(int64_t stage) const {
    return stage_replicas.empty() ? replicas() : stage_replicas[static_cast<size_t>(stage)];
  }
  /// Which of stage `stage`'s replicas runs replica (stream) `replica` there: itself, or with
  /// stage_replicas round robin, replica mod the stage's width.
  int64_t stage_replica(int64_t replica, int64_t stage) const {
    return stage_replicas.empty() ? replica : replica % stage_replicas[static_cast<size_t>(stage)];
  }
  /// The devices the layout needs: data x pipeline x context x tensor, or with stage_replicas
  /// tensor x the sum of the widths.
  int64_t device_count() const {
    if (stage_replicas.empty()) return data * pipeline * context * tensor;
    int64_t replicas_over_stages = 0;
    for (int64_t width : stage_replicas) replicas_over_stages += width;
    return replicas_over_stages * tensor;
  }

  /// Replica `replica` (= d * context + k), stage `stage`, tensor rank `rank`.
  DeviceId device(int64_t replica, int64_t stage, int64_t rank) const {
    // Called for every task and every (replica, op) of the memory accounting: no division
    // without context parallelism.
    if (context == 1 && !pipeline_outermost && stage_replicas.empty()) {
      return devices[static_cast<size_t>((replica * pipeline + stage) * tensor + rank)];
    }
    if (!stage_replicas.empty()) {  // stage by stage (no context ranks with stage_replicas)
      int64_t before = 0;
      for (int64_t s = 0; s < stage; ++s) before += stage_replicas[static_cast<size_t>(s)];
      return devices[static_cast<size_t>((before + stage_replica(replica, stage)) * tensor + rank)];
    }
    const int64_t d = replica / context, k = replica % context;
    const int64_t outer = pipeline_outermost ? stage * data + d : d * pipeline + stage;
    return devices[static_cast<size_t>((outer * context + k) * tensor + rank)];
  }
};

/// PipeDream with replicated stages (ParallelismOptions::stage_replicas, widths w): each replica
/// of stage s keeps D_s of its rounds in flight (one 1F1B schedule of depth D_s; its weight
/// versions, one more than its staleness), at most the data / w_s x `micro_batches` rounds it
/// runs. D_s is at least ceil((w_s + ... + w_{K-1}) / w_s) (SOSP 2019, section 3.2: the input
/// stage admits NOAM = ceil(machines / its machines), generalised to the machines from stage s
/// on; K - s for equal widths), and at least what lets the stages after it reach the backwards
/// its own wait for: with micro-batch units g = m x data + d (stream d's micro-batch m), stage
/// s's round r holds units [r w_s, (r + 1) w_s), its backward of round r comes after its forwards
/// of rounds up to r + D_s - 1, and needs stage s + 1 to have backwarded units up to
/// (r + 1) w_s, for which stage s + 1 must have forwarded
/// need_{s+1}(u) = (ceil(u / w_{s+1}) - 1 + D_{s+1}) w_{s+1} units (all of them at most): so
/// (r + D_s) w_s >= need_{s+1}((r + 1) w_s) for every round r. NOAM alone falls short when a
/// wide stage follows a narrow one (2-6-2: NOAM 5, but stage 1's depth 2 needs both micro-batches
/// of all 6 streams, 6 rounds of stage 0, before its first backward).
inline int64_t pipedream_replicated_weight_versions(const std::vector<int64_t>& widths, int64_t stage,
                                                    int64_t micro_batches) {
  const auto stages = static_cast<int64_t>(widths.size());
  int64_t widest = 0;
  for (int64_t width : widths) widest = std::max(widest, width);
  const int64_t units = widest * micro_batches;  // every stream's micro-batches
  std::vector<int64_t> depth(widths.size(), 1);
  auto need = [&](int64_t s, int64_t u) {  // units stage s forwards before backwarding units [0, u)
    const int64_t width = widths[static_cast<size_t>(s)];
    return std::min(units, ((u + width - 1) / width - 1 + depth[static_cast<size_t>(s)]) * width);
  };
  int64_t downstream = 0;
  for (int64_t s = stages - 1; s >= stage; --s) {
    const int64_t width = widths[static_cast<size_t>(s)], rounds = widest / width * micro_batches;
    downstream += width;
    int64_t d = (downstream + width - 1) / width;
    for (int64_t r = 0; s + 1 < stages && r < rounds; ++r) {
      d = std::max(d, (need(s + 1, std::min(units, (r + 1) * width)) + width - 1) / width - r);
    }
    depth[static_cast<size_t>(s)] = std::min(d, rounds);
  }
  return depth[static_cast<size_t>(stage)];
}

/// PipeDream's schedule: the micro-batches in flight on stage `stage` of `stages` (its 1F1B
/// warm-up depth, K - s, at most the run's `micro_batches`): the weight versions the stage
/// stashes; one fewer is its gradients' staleness (updates between a micro-batch's forward and
/// its own update). PipeDream-2BW (`double_buffered`, an update per step of M >= K
/// micro-batches): the in-flight micro-batches span at most two steps, so at most 2 versions,
/// and a stage's first K - s - 1 forwards of a step read the version before the newest
/// (staleness 1); the last stage's forward and backward are adjacent (1 version, staleness 0).
/// With `stage_replicas` (PipeDream's replicated stages), pipedream_replicated_weight_versions'.
inline int64_t pipedream_weight_versions(int64_t stages, int64_t stage, int64_t micro_batches, bool double_buffered,
                                         const std::vector<int64_t>& stage_replicas = {}) {
  if (!stage_replicas.empty()) return pipedream_replicated_weight_versions(stage_replicas, stage, micro_batches);
  const int64_t in_flight = std::min(stages - stage, micro_batches);
  return double_buffered ? std::min<int64_t>(in_flight, 2) : in_flight;
}

/// A figure measured elsewhere that a strategy's prediction is checked against.
struct PublishedFigure {
  /// "step_time_seconds" | "samples_per_second" | "model_tflops_per_gpu" | "scaling_efficiency"
  std::string metric;
  double value = 0;
  /// scaling_efficiency only: the strategy of the same scenario it is relative to; the figure is
  /// (samples/s per accelerator here) / (samples/s per accelerator there).
  std::string relative_to;
  std::string source;
};

struct Strategy {
  std::string name;
  std::optional<Cluster> cluster;  ///< the strategy's own cluster, else the scenario's
  PlacementOptions placement;
  std::optional<DataParallelOptions> data_parallel;
  std::optional<PipelineOptions> pipeline;
  std::optional<ParallelismOptions> parallelism;
  std::optional<PublishedFigure> published;
  /// What chose this strategy's layout when the scenario left it to placesim (`"stage_replicas":
  /// "auto"`: PipeDream's partitioner, sim/session/automatic_stages.h), with the alternatives it
  /// weighed: a note of the strategy's run and its report. Empty when the scenario gave it.
  std::string chosen_by;
};

}  // namespace placesim
