#include "sim/planner/parallel_3d_symmetry.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "sim/spec/spec_error.h"
#include "sim/plan/collective_schedule.h"
#include "sim/plan/plan_symmetry.h"
#include "sim/planner/parallel_3d_layout.h"

namespace placesim {
namespace {

/// The hop of `ring` that leaves `from`.
std::pair<DeviceId, DeviceId> hop_leaving(DeviceId from, const std::vector<DeviceId>& ring) {
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] == from) return {from, ring[(i + 1) % ring.size()]};
  }
  return {from, from};
}

}  // namespace

SymmetricMode symmetric_mode(bool cells) {
  if (cells) {
    return {"simulation/tier", "the closed-form tier (\"simulation\": {\"tier\": \"closed-form\"})",
            "use \"tier\": \"analytical\""};
  }
  return {"simulation/symmetry", "symmetry (\"simulation\": {\"symmetry\": \"representatives\"})",
          "set \"symmetry\": \"off\""};
}

void require_symmetric_devices(const Cluster& cluster, const RunOptions& run, const ParallelismOptions& options,
                               const SymmetricMode& mode) {
  if (run.jitter_sigma > 0) {
    throw SpecError::run(mode.option, mode.what + " needs identical replicas, but perturbations.jitter gives each device "
                                    "its own slowdowns; " + mode.otherwise);
  }
  const ClusterDevice& first = cluster.device(options.devices.front());
  for (DeviceId id : options.devices) {
    const ClusterDevice& device = cluster.device(id);
    if (device.spec.id != first.spec.id || device.speed_factor != first.speed_factor || device.shares_compute_with) {
      throw SpecError::run(mode.option, mode.what + " needs identical devices, but " + device.name.canonical() + " (" +
                                          device.spec.id + ", speed x" + std::to_string(device.speed_factor) +
                                          ") differs from " + first.name.canonical() + "; " + mode.otherwise);
    }
  }
}

void describe_symmetry(const Cluster& cluster, const ParallelismOptions& options,
                       const std::vector<std::pair<int64_t, int64_t>>& tied_stages, ExecutionPlan* plan,
                       std::vector<std::string>* notes) {
  const int64_t replicas = options.replicas(), stages = options.pipeline, ranks = options.tensor;
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
  // groups `group(k)`, k < copies (group(0) is the representative's): one flow per channel of
  // NCCL's rings (ring_channels_of), mirrored by the same channel's hops.
  auto add_ring_flow = [&](int64_t s, int64_t copies, const std::function<std::vector<DeviceId>(int64_t)>& group) {
    const size_t first = flows.size();
    for (const std::vector<DeviceId>& ring : ring_channels_of(CollectiveAlgorithm::kRing, group(0), cluster)) {
      auto [from, to] = hop_leaving(options.device(0, s, 0), ring);
      flows.push_back(MirroredFlow{from, to, {}});
    }
    for (int64_t k = 0; k < copies; ++k) {
      const std::vector<std::vector<DeviceId>> rings = ring_channels_of(CollectiveAlgorithm::kRing, group(k), cluster);
      for (size_t c = 0; c < rings.size() && first + c < flows.size(); ++c) {
        for (size_t i = 0; i < rings[c].size(); ++i) {
          flows[first + c].images.emplace_back(rings[c][i], rings[c][(i + 1) % rings[c].size()]);
        }
      }
    }
  };
  for (int64_t s = 0; s < stages; ++s) {
    if (ranks > 1) {  // tensor all-reduces of replica 0, mirrored by the other replicas'
      add_ring_flow(s, replicas, [&](int64_t d) { return layout.tensor_group(d, s); });
    }
    if (options.context > 1) {  // K and V gathers of replica 0's context group, mirrored by the others'
      add_ring_flow(s, options.data * ranks, [&](int64_t k) {
        return layout.context_group(k / ranks * options.context, s, k % ranks);
      });
    }
    if (options.expert > 1) {
      // Expert parallelism. The representative's all-to-all sends to each member j of its expert
      // group: mirrored by every member i's flow to member i + j of the same group, in every
      // expert group (data blocks x context ranks x tensor ranks).
      const int64_t size = options.expert, groups = options.data / size * options.context * ranks;
      auto expert_group = [&](int64_t g) {  // g: (data block, context rank, tensor rank)
        const int64_t r = g % ranks, k = g / ranks % options.context, block = g / ranks / options.context;
        return layout.expert_group(block * size * options.context + k, s, r);
      };
      for (int64_t j = 1; j < size; ++j) {
        const std::vector<DeviceId> own = expert_group(0);
        MirroredFlow flow{own[0], own[static_cast<size_t>(j)], {}};
        for (int64_t g = 0; g < groups; ++g) {
          const std::vector<DeviceId> group = expert_group(g);
          for (int64_t i = 0; i < size; ++i) {
            flow.images.emplace_back(group[static_cast<size_t>(i)], group[static_cast<size_t>((i + j) % size)]);
          }
        }
        flows.push_back(std::move(flow));
      }
      // Each expert rank's gradient rings: the representative's (rank 0's), mirrored by the other
      // ranks' and tensor ranks'.
      const size_t holders = layout.expert_data_group(0, s, 0).size();
      const size_t expert_shards = layout.expert_shard_group(0, s, 0).size();
      if (replicas > size && (options.zero_stage == 0 || expert_shards == holders)) {
        add_ring_flow(s, size * ranks, [&](int64_t k) {
          return layout.expert_data_group(k / ranks * options.context, s, k % ranks);
        });
      } else if (replicas > size) {
        // Hybrid sharding: the rings of every expert shard group (one per replica at position
        // 0), then of every group across them (one per expert rank and position).
        const std::vector<int64_t> position = layout.expert_shard_places().position;
        std::vector<int64_t> group_firsts;
        std::map<std::pair<int64_t, int64_t>, int64_t> cross_firsts;  // (expert rank, position) -> replica
        for (int64_t q = 0; q < replicas; ++q) {
          const int64_t place = position[static_cast<size_t>(q)];
          if (place == 0) group_firsts.push_back(q);
          cross_firsts.emplace(std::make_pair(q / options.context % size, place), q);
        }
        std::vector<int64_t> cross_replicas;
        for (const auto& entry : cross_firsts) cross_replicas.push_back(entry.second);
        std::sort(cross_replicas.begin(), cross_replicas.end());  // replica 0's first
        const auto group_count = static_cast<int64_t>(group_firsts.size());
        const auto cross_count = static_cast<int64_t>(cross_replicas.size());
        if (expert_shards > 1) {
          add_ring_flow(s, group_count * ranks, [&](int64_t k) {
            return layout.expert_shard_group(group_firsts[static_cast<size_t>(k / ranks)], s, k % ranks);
          });
        }
        if (holders > expert_shards) {
          add_ring_flow(s, cross_count * ranks, [&](int64_t k) {
            return layout.expert_cross_group(cross_replicas[static_cast<size_t>(k / ranks)], s, k % ranks, position);
          });
        }
      }
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
    throw SpecError::run("simulation/symmetry",
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

}  // namespace placesim
