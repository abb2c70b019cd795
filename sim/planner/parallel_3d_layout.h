// Parallel3dLayout: where replica d's pipeline stage s, tensor rank r runs in a 3D strategy, and
// the device groups its collectives run over (tensor, context, data-parallel, ZeRO shard and
// cross-shard groups, expert groups); plus the lines of `run`'s notes that list them. A replica here is one
// context rank of one data-parallel replica (ParallelismOptions::replicas()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/spec/strategy.h"

namespace placesim {

class Parallel3dLayout {
 public:
  /// `options` must outlive the layout.
  explicit Parallel3dLayout(const ParallelismOptions& options) : options_(options) {}

  DeviceId device(int64_t replica, int64_t stage, int64_t rank) const { return options_.device(replica, stage, rank); }
  /// Replica `replica`'s stage `stage`: its tensor ranks in rank order (Megatron's tensor group).
  std::vector<DeviceId> tensor_group(int64_t replica, int64_t stage) const;
  /// Stage `stage`'s tensor rank `rank` in every replica, in replica order (the gradient
  /// reduction: data x context replicas; with PipeDream's replicated stages, the stage's own).
  std::vector<DeviceId> data_group(int64_t stage, int64_t rank) const;
  /// The context ranks of `replica`'s data replica, at the same stage and tensor rank: the group
  /// that all-gathers K and V before each attention (context_parallel.h).
  std::vector<DeviceId> context_group(int64_t replica, int64_t stage, int64_t rank) const;
  /// Expert parallelism: the `expert` consecutive data replicas of `replica`'s expert group, at
  /// its context rank, stage and tensor rank: the group whose all-to-alls route the tokens.
  std::vector<DeviceId> expert_group(int64_t replica, int64_t stage, int64_t rank) const;
  /// The replicas holding the same experts as `replica` (every data replica of its expert rank,
  /// every context rank): the group that reduces those experts' gradients.
  std::vector<DeviceId> expert_data_group(int64_t replica, int64_t stage, int64_t rank) const;
  /// ZeRO over an expert's holders: those of expert_data_group in `replica`'s shard group (all of
  /// them without hybrid sharding), which divide its parameters, gradients and optimizer state.
  std::vector<DeviceId> expert_shard_group(int64_t replica, int64_t stage, int64_t rank) const;
  /// By replica: its position in its expert shard group (the holders of its experts in its ZeRO
  /// shard group, ascending) and that group's size. One pass over the replicas.
  struct ExpertShardPlaces {
    std::vector<int64_t> position;
    std::vector<int64_t> group_size;
  };
  ExpertShardPlaces expert_shard_places() const;
  /// Hybrid sharding over an expert's holders: those holding the same shard as `replica` (the
  /// same position in their expert shard group: `position`, expert_shard_places') in every shard group.
  std::vector<DeviceId> expert_cross_group(int64_t replica, int64_t stage, int64_t rank,
                                           const std::vector<int64_t>& position) const;
  /// ZeRO: the zero_shards() consecutive replicas that `replica` shares its shards with.
  std::vector<DeviceId> shard_group(int64_t replica, int64_t stage, int64_t rank) const;
  /// Hybrid sharding: the replicas holding the same shard as `replica` in every shard group
  /// (replica mod shards, + shards, ...).
  std::vector<DeviceId> cross_group(int64_t replica, int64_t stage, int64_t rank) const;

  /// "tensor groups: replica 0 stage 0 [GPU:0 GPU:1] ..." (machine-qualified names on several machines).
  std::string tensor_groups_note(const Cluster& cluster) const;
  /// "context groups: [GPU:0 GPU:2] ...".
  std::string context_groups_note(const Cluster& cluster) const;
  /// "expert groups: [GPU:0 GPU:8] ...".
  std::string expert_groups_note(const Cluster& cluster) const;
  /// "data-parallel groups: [GPU:0 GPU:4] ...".
  std::string data_groups_note(const Cluster& cluster) const;

 private:
  /// The replicas (data x context indices, ascending) holding `replica`'s experts.
  std::vector<int64_t> expert_holders(int64_t replica) const;
  std::vector<DeviceId> devices_of(const std::vector<int64_t>& replicas, int64_t stage, int64_t rank) const;

  const ParallelismOptions& options_;
};

}  // namespace placesim
