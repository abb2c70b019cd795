#include "sim/planner/parallel_3d_layout.h"

#include <map>
#include <utility>

namespace placesim {
namespace {

/// A device's name in the notes; `several_nodes`: the cluster has more than one machine (counted
/// once by the caller: Cluster::node_count() scans every device).
std::string device_label(const Cluster& cluster, DeviceId id, bool several_nodes) {
  const ClusterDevice& device = cluster.device(id);
  if (!several_nodes) return device.name.local();
  return "task:" + std::to_string(device.node) + "/" + device.name.local();
}

std::string group_label(const Cluster& cluster, const std::vector<DeviceId>& group, bool several_nodes) {
  std::string text = "[";
  for (size_t i = 0; i < group.size(); ++i) text += (i ? " " : "") + device_label(cluster, group[i], several_nodes);
  return text + "]";
}

}  // namespace

std::vector<DeviceId> Parallel3dLayout::tensor_group(int64_t replica, int64_t stage) const {
  std::vector<DeviceId> group;
  for (int64_t r = 0; r < options_.tensor; ++r) group.push_back(device(replica, stage, r));
  return group;
}

std::vector<DeviceId> Parallel3dLayout::data_group(int64_t stage, int64_t rank) const {
  std::vector<DeviceId> group;
  for (int64_t d = 0; d < options_.stage_width(stage); ++d) group.push_back(device(d, stage, rank));
  return group;
}

std::vector<DeviceId> Parallel3dLayout::context_group(int64_t replica, int64_t stage, int64_t rank) const {
  const int64_t first = replica / options_.context * options_.context;
  std::vector<DeviceId> group;
  for (int64_t k = first; k < first + options_.context; ++k) group.push_back(device(k, stage, rank));
  return group;
}

std::vector<DeviceId> Parallel3dLayout::expert_group(int64_t replica, int64_t stage, int64_t rank) const {
  const int64_t context = options_.context, size = options_.expert;
  const int64_t first = replica / context / size * size;
  std::vector<DeviceId> group;
  for (int64_t d = first; d < first + size; ++d) group.push_back(device(d * context + replica % context, stage, rank));
  return group;
}

std::vector<int64_t> Parallel3dLayout::expert_holders(int64_t replica) const {
  const int64_t context = options_.context, size = options_.expert;
  std::vector<int64_t> holders;
  for (int64_t d = replica / context % size; d < options_.data; d += size) {
    for (int64_t k = 0; k < context; ++k) holders.push_back(d * context + k);
  }
  return holders;
}

std::vector<DeviceId> Parallel3dLayout::devices_of(const std::vector<int64_t>& replicas, int64_t stage,
                                                   int64_t rank) const {
  std::vector<DeviceId> group;
  group.reserve(replicas.size());
  for (int64_t replica : replicas) group.push_back(device(replica, stage, rank));
  return group;
}

std::vector<DeviceId> Parallel3dLayout::expert_data_group(int64_t replica, int64_t stage, int64_t rank) const {
  return devices_of(expert_holders(replica), stage, rank);
}

std::vector<DeviceId> Parallel3dLayout::expert_shard_group(int64_t replica, int64_t stage, int64_t rank) const {
  const int64_t shards = options_.zero_shards();
  std::vector<int64_t> members;
  for (int64_t holder : expert_holders(replica)) {
    if (holder / shards == replica / shards) members.push_back(holder);
  }
  return devices_of(members, stage, rank);
}

Parallel3dLayout::ExpertShardPlaces Parallel3dLayout::expert_shard_places() const {
  const int64_t replicas = options_.replicas(), shards = options_.zero_shards();
  auto group_of = [&](int64_t q) { return std::make_pair(q / shards, q / options_.context % options_.expert); };
  std::map<std::pair<int64_t, int64_t>, int64_t> holders;  // by (shard group, expert rank): counted so far
  ExpertShardPlaces places{std::vector<int64_t>(static_cast<size_t>(replicas)),
                           std::vector<int64_t>(static_cast<size_t>(replicas))};
  for (int64_t q = 0; q < replicas; ++q) places.position[static_cast<size_t>(q)] = holders[group_of(q)]++;
  for (int64_t q = 0; q < replicas; ++q) places.group_size[static_cast<size_t>(q)] = holders.at(group_of(q));
  return places;
}

std::vector<DeviceId> Parallel3dLayout::expert_cross_group(int64_t replica, int64_t stage, int64_t rank,
                                                           const std::vector<int64_t>& position) const {
  std::vector<int64_t> members;
  for (int64_t holder : expert_holders(replica)) {
    if (position[static_cast<size_t>(holder)] == position[static_cast<size_t>(replica)]) members.push_back(holder);
  }
  return devices_of(members, stage, rank);
}

std::vector<DeviceId> Parallel3dLayout::shard_group(int64_t replica, int64_t stage, int64_t rank) const {
  const int64_t shards = options_.zero_shards();
  std::vector<DeviceId> group;
  for (int64_t k = replica / shards * shards; k < (replica / shards + 1) * shards; ++k) group.push_back(device(k, stage, rank));
  return group;
}

std::vector<DeviceId> Parallel3dLayout::cross_group(int64_t replica, int64_t stage, int64_t rank) const {
  const int64_t shards = options_.zero_shards();
  std::vector<DeviceId> group;
  for (int64_t k = replica % shards; k < options_.replicas(); k += shards) group.push_back(device(k, stage, rank));
  return group;
}

std::string Parallel3dLayout::tensor_groups_note(const Cluster& cluster) const {
  const bool several_nodes = cluster.node_count() > 1;
  std::string text = "tensor groups:";
  for (int64_t d = 0; d < options_.replicas(); ++d) {
    for (int64_t s = 0; s < options_.pipeline; ++s) {
      if (d >= options_.stage_width(s)) continue;  // a replicated stage's replicas: each once
      text += " replica " + std::to_string(d) + " stage " + std::to_string(s) + " " +
              group_label(cluster, tensor_group(d, s), several_nodes);
    }
  }
  return text;
}

std::string Parallel3dLayout::context_groups_note(const Cluster& cluster) const {
  const bool several_nodes = cluster.node_count() > 1;
  std::string text = "context groups:";
  for (int64_t d = 0; d < options_.replicas(); d += options_.context) {
    for (int64_t s = 0; s < options_.pipeline; ++s) {
      for (int64_t r = 0; r < options_.tensor; ++r) text += " " + group_label(cluster, context_group(d, s, r), several_nodes);
    }
  }
  return text;
}

std::string Parallel3dLayout::expert_groups_note(const Cluster& cluster) const {
  const bool several_nodes = cluster.node_count() > 1;
  std::string text = "expert groups:";
  const int64_t context = options_.context;
  for (int64_t d = 0; d < options_.data; d += options_.expert) {
    for (int64_t k = 0; k < context; ++k) {
      for (int64_t s = 0; s < options_.pipeline; ++s) {
        for (int64_t r = 0; r < options_.tensor; ++r) {
          text += " " + group_label(cluster, expert_group(d * context + k, s, r), several_nodes);
        }
      }
    }
  }
  return text;
}

std::string Parallel3dLayout::data_groups_note(const Cluster& cluster) const {
  const bool several_nodes = cluster.node_count() > 1;
  std::string text = "data-parallel groups:";
  for (int64_t s = 0; s < options_.pipeline; ++s) {
    for (int64_t r = 0; r < options_.tensor; ++r) text += " " + group_label(cluster, data_group(s, r), several_nodes);
  }
  return text;
}

}  // namespace placesim
