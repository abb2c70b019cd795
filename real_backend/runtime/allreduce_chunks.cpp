#include "real_backend/runtime/allreduce_chunks.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/plan/nccl_trees.h"

namespace placesim::real {
namespace {

struct Elements {
  size_t offset = 0;
  size_t count = 0;
};

/// Part `index` of `parts` near-equal parts of `whole`.
Elements part(Elements whole, size_t parts, size_t index) {
  const size_t begin = whole.count * index / parts, end = whole.count * (index + 1) / parts;
  return {whole.offset + begin, end - begin};
}

AllreduceChunk chunk(Elements elements, bool reduces) { return {elements.offset, elements.count, reduces}; }

/// Round `round` of a ring all-reduce of `region` (split into n chunks) for the participant at
/// `position`: in reduce-scatter round r < n-1 it sends chunk (p - r) mod n and the receiver adds
/// it, so that after n-1 rounds p holds chunk (p + 1) mod n reduced; in all-gather round j it
/// sends chunk (p + 1 - j) mod n and the receiver copies it.
AllreduceChunk ring_round(Elements region, size_t n, size_t position, size_t round) {
  if (round + 1 < n) return chunk(part(region, n, (position + n - round) % n), true);
  const size_t j = round - (n - 1);
  return chunk(part(region, n, (position + 1 + n - j) % n), false);
}

class Checker {
 public:
  explicit Checker(CollectiveAlgorithm algorithm) : algorithm_(algorithm) {}
  void require(bool ok, const std::string& what) const {
    if (!ok) {
      throw std::logic_error("allreduce_chunks: the " + to_string(algorithm_) +
                             " schedule does not have the structure this executor knows: " + what);
    }
  }

 private:
  CollectiveAlgorithm algorithm_;
};

std::map<DeviceId, size_t> positions(const std::vector<DeviceId>& order) {
  std::map<DeviceId, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  return position;
}

/// The k-th send of a device is its round k: every participant sends once per round.
class SendCounter {
 public:
  size_t next(DeviceId device) { return sent_[device]++; }

 private:
  std::map<DeviceId, size_t> sent_;
};

/// Rounds [first_round, first_round + rounds) of the ring all-reduce: all 2(N-1) for an
/// all-reduce, its first N-1 for a reduce-scatter, its last N-1 for an all-gather; over each of
/// NCCL's channels (`rings`, whose steps follow one another in the schedule), its part c of the
/// buffer.
std::vector<AllreduceChunk> ring_chunks(const std::vector<std::vector<DeviceId>>& rings,
                                        const std::vector<CollectiveStep>& steps, Elements whole, const Checker& check,
                                        size_t first_round, size_t rounds) {
  const size_t n = rings.front().size(), per_ring = n * rounds;
  check.require(steps.size() == rings.size() * per_ring,
                "expected " + std::to_string(rounds) + " sends per device on each of " + std::to_string(rings.size()) +
                    " rings");
  std::vector<AllreduceChunk> chunks;
  for (size_t c = 0; c < rings.size(); ++c) {
    const std::vector<DeviceId>& ring = rings[c];
    const Elements region = part(whole, rings.size(), c);
    auto position = positions(ring);
    SendCounter sends;
    for (size_t s = c * per_ring; s < (c + 1) * per_ring; ++s) {
      const CollectiveStep& step = steps[s];
      const size_t p = position.at(step.from), round = sends.next(step.from);
      check.require(step.to == ring[(p + 1) % n] && round < rounds, "a step off the topology ring");
      chunks.push_back(ring_round(region, n, p, first_round + round));
    }
  }
  return chunks;
}

/// NCCL's two trees (nccl_trees), each on its half of the buffer, in allreduce_schedule's
/// per-round order: every chunk up every edge, leaves first (the parent adds it), then every
/// chunk down, root first (the child copies it); chunk k is part k of the half.
std::vector<AllreduceChunk> tree_chunks(const std::vector<DeviceId>& group, const Cluster& cluster,
                                        const std::vector<CollectiveStep>& steps, Elements whole, const Checker& check) {
  const auto trees = nccl_trees(group, cluster);
  const size_t edges = group.size() - 1;
  check.require(steps.size() % (4 * edges) == 0, "expected 4(N-1) steps per chunk");
  const size_t chunks = steps.size() / (4 * edges);
  std::vector<AllreduceChunk> result;
  size_t s = 0;
  for (size_t t = 0; t < 2; ++t) {
    check.require(trees[t].edges.size() == edges, "a tree that misses a member");
    const Elements half = part(whole, 2, t);
    for (const bool up : {true, false}) {
      for (size_t k = 0; k < chunks; ++k) {
        const Elements piece = part(half, chunks, k);
        for (size_t j = 0; j < edges; ++j) {
          const TreeEdge& edge = trees[t].edges[up ? j : edges - 1 - j];
          const CollectiveStep& step = steps[s++];
          check.require(up ? step.from == edge.child && step.to == edge.parent
                           : step.from == edge.parent && step.to == edge.child,
                        "a step off NCCL's trees");
          result.push_back(chunk(piece, up));
        }
      }
    }
  }
  return result;
}

/// Rank i's part after `level` halving rounds: round k halves it, i keeping the upper half when
/// bit N / 2^(k+1) of i is set.
Elements halving_region(size_t i, size_t n, size_t level, Elements whole) {
  Elements region = whole;
  for (size_t k = 0; k < level; ++k) region = part(region, 2, (i & (n >> (k + 1))) ? 1 : 0);
  return region;
}

/// Halving round k: i sends the half its partner i ^ N/2^(k+1) keeps (the partner adds it).
/// Doubling rounds mirror them: i sends the part it holds reduced (the partner copies it).
std::vector<AllreduceChunk> halving_doubling_chunks(const std::vector<DeviceId>& group,
                                                    const std::vector<CollectiveStep>& steps, Elements whole,
                                                    const Checker& check) {
  const size_t n = group.size();
  size_t rounds = 0;
  while ((size_t{1} << rounds) < n) ++rounds;
  check.require(steps.size() == 2 * n * rounds, "expected 2 N log2(N) steps");
  auto position = positions(group);
  SendCounter sends;
  std::vector<AllreduceChunk> chunks;
  for (const CollectiveStep& step : steps) {
    const size_t i = position.at(step.from), k = sends.next(step.from);
    check.require(k < 2 * rounds, "a rank sends more than 2 log2(N) times");
    const bool halving = k < rounds;
    const size_t round = halving ? k : 2 * rounds - 1 - k;
    const size_t partner = i ^ (n >> (round + 1));
    check.require(step.to == group[partner], "a step to a rank other than the round's partner");
    chunks.push_back(chunk(halving_region(halving ? partner : i, n, round + 1, whole), halving));
  }
  return chunks;
}

/// One run of ring rounds a device of a hierarchical schedule sends: inside its node (a ring of
/// the node's g devices over the whole buffer) or along its rail (a ring of the M nodes' devices
/// of its local rank r over part (r + 1) mod g), rounds [first_round, first_round + rounds) of
/// that ring's all-reduce (ring_round: its reduce-scatter, then its all-gather).
struct RingSegment {
  bool inside_node = true;
  size_t first_round = 0;
  size_t rounds = 0;
};

/// The chunks of a hierarchical schedule whose devices each send `segments` in order: a
/// device's k-th send tells its segment and round.
std::vector<AllreduceChunk> hierarchical_segment_chunks(const std::vector<std::vector<DeviceId>>& nodes,
                                                        const std::vector<RingSegment>& segments,
                                                        const std::vector<CollectiveStep>& steps, Elements whole,
                                                        const Checker& check) {
  const size_t g = nodes.front().size(), m = nodes.size();
  size_t sends_each = 0;
  for (const RingSegment& segment : segments) sends_each += segment.rounds;
  check.require(steps.size() == m * g * sends_each, "expected " + std::to_string(sends_each) + " sends per device");
  std::map<DeviceId, std::pair<size_t, size_t>> where;  // device -> (node, local rank)
  for (size_t a = 0; a < m; ++a) {
    for (size_t r = 0; r < g; ++r) where[nodes[a][r]] = {a, r};
  }
  SendCounter sends;
  std::vector<AllreduceChunk> chunks;
  for (const CollectiveStep& step : steps) {
    const auto [a, r] = where.at(step.from);
    size_t k = sends.next(step.from);
    size_t s = 0;
    while (s < segments.size() && k >= segments[s].rounds) k -= segments[s++].rounds;
    check.require(s < segments.size(), "a device sends more often than the schedule's rings");
    const RingSegment& segment = segments[s];
    const size_t round = segment.first_round + k;
    if (segment.inside_node) {
      check.require(step.to == nodes[a][(r + 1) % g], "a step off the node's ring");
      chunks.push_back(ring_round(whole, g, r, round));
    } else {
      check.require(step.to == nodes[(a + 1) % m][r], "a step off the rail's ring");
      chunks.push_back(ring_round(part(whole, g, (r + 1) % g), m, a, round));
    }
  }
  return chunks;
}

/// The segments' chunks over each of NCCL's channels (hierarchical_channels, whose steps follow one
/// another in the schedule), channel c over its part c of the buffer.
std::vector<AllreduceChunk> hierarchical_channel_chunks(
    const std::vector<DeviceId>& group, const Cluster& cluster, const std::vector<CollectiveStep>& steps,
    Elements whole, const Checker& check,
    const std::function<std::vector<RingSegment>(size_t g, size_t m)>& segments_of) {
  const auto channels = hierarchical_channels(group, cluster);
  check.require(steps.size() % channels.size() == 0, "steps that do not split evenly over the channels");
  const size_t per_channel = steps.size() / channels.size();
  std::vector<AllreduceChunk> chunks;
  for (size_t c = 0; c < channels.size(); ++c) {
    const auto& nodes = channels[c];
    const std::vector<CollectiveStep> mine(steps.begin() + static_cast<std::ptrdiff_t>(c * per_channel),
                                           steps.begin() + static_cast<std::ptrdiff_t>((c + 1) * per_channel));
    const auto part_chunks = hierarchical_segment_chunks(nodes, segments_of(nodes.front().size(), nodes.size()), mine,
                                                         part(whole, channels.size(), c), check);
    chunks.insert(chunks.end(), part_chunks.begin(), part_chunks.end());
  }
  return chunks;
}

/// Ring reduce-scatter inside each node (g devices: local rank r ends with shard (r+1) mod g
/// reduced), a ring all-reduce of that shard across the M nodes among devices of equal local rank,
/// then a ring all-gather inside each node; over each channel.
std::vector<AllreduceChunk> hierarchical_chunks(const std::vector<DeviceId>& group, const Cluster& cluster,
                                                const std::vector<CollectiveStep>& steps, Elements whole,
                                                const Checker& check) {
  return hierarchical_channel_chunks(group, cluster, steps, whole, check, [](size_t g, size_t m) {
    return std::vector<RingSegment>{{true, 0, g - 1}, {false, 0, 2 * (m - 1)}, {true, g - 1, g - 1}};
  });
}

/// Hierarchical reduce-scatter (the first half of hierarchical_chunks: inside each node, then
/// along the rails) or all-gather (the second half: along the rails, then inside each node).
std::vector<AllreduceChunk> hierarchical_half_chunks(bool reduce_scatter, const std::vector<DeviceId>& group,
                                                     const Cluster& cluster, const std::vector<CollectiveStep>& steps,
                                                     Elements whole, const Checker& check) {
  return hierarchical_channel_chunks(group, cluster, steps, whole, check, [reduce_scatter](size_t g, size_t m) {
    return reduce_scatter ? std::vector<RingSegment>{{true, 0, g - 1}, {false, 0, m - 1}}
                          : std::vector<RingSegment>{{false, m - 1, m - 1}, {true, g - 1, g - 1}};
  });
}

}  // namespace

std::vector<AllreduceChunk> allreduce_chunks(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                             const Cluster& cluster, const std::vector<CollectiveStep>& steps,
                                             size_t elements) {
  const Checker check(algorithm);
  if (group.size() < 2) {
    check.require(steps.empty(), "steps for a group of one");
    return {};
  }
  for (const CollectiveStep& step : steps) check.require(step.latency_rounds == 1, "a per-phase step");
  const Elements whole{0, elements};
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kRingInRankOrder:
      return ring_chunks(ring_channels_of(algorithm, group, cluster), steps, whole, check, 0, 2 * (group.size() - 1));
    case CollectiveAlgorithm::kDoubleBinaryTree: return tree_chunks(group, cluster, steps, whole, check);
    case CollectiveAlgorithm::kHalvingDoubling: return halving_doubling_chunks(group, steps, whole, check);
    case CollectiveAlgorithm::kHierarchical: return hierarchical_chunks(group, cluster, steps, whole, check);
    case CollectiveAlgorithm::kHostHalvingDoubling: break;  // refused before execution (Executor::simulate)
    case CollectiveAlgorithm::kPairwise: break;             // all-to-all only
  }
  check.require(false, "an unknown algorithm");
  return {};
}

size_t collective_elements(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes) {
  const size_t floats = static_cast<size_t>(std::ceil(std::max(0.0, bytes) / sizeof(float)));
  if (kind != CollectiveKind::kAllToAll || group.size() < 2) return floats;
  const size_t n = group.size();
  return (floats + n - 1) / n * n;
}

size_t collective_buffer_elements(CollectiveKind kind, size_t elements) {
  return kind == CollectiveKind::kAllToAll ? 2 * elements : elements;
}

std::vector<AllreduceChunk> collective_chunks(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                              const std::vector<DeviceId>& group, const Cluster& cluster,
                                              const std::vector<CollectiveStep>& steps, size_t elements) {
  if (kind == CollectiveKind::kAllReduce) return allreduce_chunks(algorithm, group, cluster, steps, elements);
  const Checker check(algorithm);
  if (kind == CollectiveKind::kAllToAll) {
    const size_t n = group.size();
    check.require(algorithm == CollectiveAlgorithm::kPairwise, "an all-to-all that is not pairwise");
    if (n < 2) {
      check.require(steps.empty(), "steps for a group of one");
      return {};
    }
    check.require(elements % n == 0, "an all-to-all whose elements do not split into equal parts");
    check.require(steps.size() == n * (n - 1), "an all-to-all without one step per ordered pair");
    const size_t part = elements / n;
    std::vector<AllreduceChunk> chunks;
    size_t s = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        const CollectiveStep& step = steps[s++];
        check.require(step.from == group[i] && step.to == group[j] && step.deps.empty() && step.latency_rounds == 1,
                      "an all-to-all step out of the (sender, receiver) order");
        AllreduceChunk chunk{j * part, part, false};
        chunk.into_offset = elements + i * part;
        chunks.push_back(chunk);
      }
    }
    return chunks;
  }
  check.require((kind == CollectiveKind::kAllGather || kind == CollectiveKind::kReduceScatter) &&
                    (algorithm == CollectiveAlgorithm::kRing || algorithm == CollectiveAlgorithm::kHierarchical),
                "a " + to_string(kind) + " that is not a ring or hierarchical all-gather or reduce-scatter");
  if (group.size() < 2) {
    check.require(steps.empty(), "steps for a group of one");
    return {};
  }
  for (const CollectiveStep& step : steps) check.require(step.latency_rounds == 1, "a per-phase step");
  const bool reduce_scatter = kind == CollectiveKind::kReduceScatter;
  const Elements whole{0, elements};
  if (algorithm == CollectiveAlgorithm::kHierarchical) {
    return hierarchical_half_chunks(reduce_scatter, group, cluster, steps, whole, check);
  }
  // The two halves of the ring all-reduce: a reduce-scatter is its first n-1 rounds, an
  // all-gather its last n-1 (each device starting from the chunk a reduce-scatter leaves it).
  const size_t n = group.size();
  return ring_chunks(ring_channels_of(algorithm, group, cluster), steps, whole, check, reduce_scatter ? 0 : n - 1,
                     n - 1);
}

}  // namespace placesim::real
