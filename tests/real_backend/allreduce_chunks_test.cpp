// allreduce_chunks gives each step of every all-reduce schedule the data it carries. Specified
// three ways, for every algorithm and group size, with element counts that do not split evenly:
//  - running the steps in plan order on float buffers leaves every device with the elementwise
//    sum (device i contributes 2^i x (1 + e mod 3) to element e, so a contribution lost or
//    counted twice changes the sum);
//  - each step moves the elements its schedule's bytes say;
//  - two steps that touch the same elements of one device, one of them writing, are ordered by
//    the schedule's dependencies (two adds into one device may run at once: the executor
//    serialises them and addition commutes), so concurrent copy threads compute the same sums.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "tests/support/test_support.h"
#include "real_backend/runtime/allreduce_chunks.h"

namespace placesim {
namespace {

using real::AllreduceChunk;

constexpr size_t kElements = 1003;  // prime: no group size divides it

/// n devices joined in the ring 0, 2, 4, ..., 1, 3, 5, ...: topology_ring reorders the group.
Cluster shuffled_ring(size_t n) {
  Cluster cluster = testing::gpus(n);
  std::vector<DeviceId> order;
  for (size_t i = 0; i < n; i += 2) order.push_back(i);
  for (size_t i = 1; i < n; i += 2) order.push_back(i);
  for (size_t i = 0; i < n && n > 1; ++i) {
    cluster.add_link(cluster.device(order[i]).vertex, cluster.device(order[(i + 1) % n]).vertex,
                     testing::round_link());
  }
  return cluster;
}

/// `nodes` machines of `per_node` devices each (task:a/GPU:r), without links.
Cluster machines(size_t nodes, size_t per_node) {
  Cluster cluster;
  cluster.name = "test";
  for (size_t a = 0; a < nodes; ++a) {
    for (size_t r = 0; r < per_node; ++r) {
      ClusterDevice device;
      device.name = DeviceName{"worker", 0, static_cast<int>(a), DeviceKind::kGpu, static_cast<int>(r)};
      device.spec = testing::round_gpu();
      device.node = static_cast<int>(a);
      cluster.add_device(device, "task:" + std::to_string(a) + "/GPU:" + std::to_string(r));
    }
  }
  return cluster;
}

/// The same with each machine's GPUs joined in a cycle (NCCL's channels: the cycle each way, so
/// a hierarchical collective runs two channels from 3 GPUs a machine) and a link from each GPU
/// to its namesake on the next machine.
Cluster linked_machines(size_t nodes, size_t per_node) {
  Cluster cluster = machines(nodes, per_node);
  for (size_t a = 0; a < nodes; ++a) {
    for (size_t r = 0; r < per_node && per_node > 1; ++r) {
      if (per_node == 2 && r == 1) break;
      cluster.add_link(cluster.device(a * per_node + r).vertex, cluster.device(a * per_node + (r + 1) % per_node).vertex,
                       testing::round_link());
    }
    for (size_t r = 0; r < per_node && nodes > 1 && (nodes > 2 || a == 0); ++r) {
      cluster.add_link(cluster.device(a * per_node + r).vertex, cluster.device((a + 1) % nodes * per_node + r).vertex,
                       testing::round_link());
    }
  }
  return cluster;
}

std::vector<DeviceId> all_devices(const Cluster& cluster) {
  std::vector<DeviceId> group;
  for (DeviceId d = 0; d < cluster.devices().size(); ++d) group.push_back(d);
  return group;
}

struct Case {
  std::string name;
  CollectiveAlgorithm algorithm;
  Cluster cluster;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (size_t n = 2; n <= 8; ++n) {
    all.push_back({"ring " + std::to_string(n), CollectiveAlgorithm::kRing, shuffled_ring(n)});
    all.push_back({"tree " + std::to_string(n), CollectiveAlgorithm::kDoubleBinaryTree, shuffled_ring(n)});
  }
  for (size_t n : {2, 4, 8, 16}) {
    all.push_back({"halving-doubling " + std::to_string(n), CollectiveAlgorithm::kHalvingDoubling, shuffled_ring(n)});
  }
  for (auto [nodes, per_node] : std::vector<std::pair<size_t, size_t>>{{1, 3}, {2, 1}, {2, 2}, {3, 2}, {2, 4}, {4, 3}}) {
    all.push_back({"hierarchical " + std::to_string(nodes) + "x" + std::to_string(per_node),
                   CollectiveAlgorithm::kHierarchical, machines(nodes, per_node)});
  }
  for (auto [nodes, per_node] : std::vector<std::pair<size_t, size_t>>{{2, 3}, {3, 4}}) {
    all.push_back({"hierarchical over channels " + std::to_string(nodes) + "x" + std::to_string(per_node),
                   CollectiveAlgorithm::kHierarchical, linked_machines(nodes, per_node)});
  }
  return all;
}

/// A case's group (all its devices), its per-round schedule of kElements floats, and the chunk
/// each step carries.
struct Scheduled {
  std::vector<DeviceId> group;
  std::vector<CollectiveStep> steps;
  std::vector<AllreduceChunk> chunks;
};

Scheduled schedule(const Case& c) {
  Scheduled s;
  s.group = all_devices(c.cluster);
  s.steps = allreduce_schedule(c.algorithm, s.group, 4.0 * kElements, c.cluster, CollectiveFidelity::kPerRound);
  s.chunks = real::allreduce_chunks(c.algorithm, s.group, c.cluster, s.steps, kElements);
  return s;
}

float contribution(size_t member, size_t element) {
  return std::ldexp(1.0f, static_cast<int>(member)) * static_cast<float>(1 + element % 3);
}

size_t member_of(const std::vector<DeviceId>& group, DeviceId device) {
  return static_cast<size_t>(std::find(group.begin(), group.end(), device) - group.begin());
}

TEST(AllreduceChunks, StepsRunInPlanOrderLeaveEveryDeviceWithTheElementwiseSum) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto [group, steps, chunks] = schedule(c);
    const size_t n = group.size();
    ASSERT_EQ(chunks.size(), steps.size());
    std::vector<std::vector<float>> buffers(n, std::vector<float>(kElements));
    for (size_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < kElements; ++e) buffers[i][e] = contribution(i, e);
    }
    for (size_t s = 0; s < steps.size(); ++s) {  // deps point to earlier steps: index order is a plan order
      const std::vector<float>& from = buffers[member_of(group, steps[s].from)];
      std::vector<float>& into = buffers[member_of(group, steps[s].to)];
      for (size_t e = chunks[s].offset; e < chunks[s].offset + chunks[s].count; ++e) {
        into[e] = chunks[s].reduces ? into[e] + from[e] : from[e];
      }
    }
    // sum over i of 2^i (1 + e mod 3) = (2^n - 1)(1 + e mod 3), exact in floats for n < 24
    const float all_members = std::ldexp(1.0f, static_cast<int>(n)) - 1;
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < kElements; ++e) wrong += buffers[i][e] != all_members * static_cast<float>(1 + e % 3);
    }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(AllreduceChunks, EachStepMovesTheElementsOfItsScheduledBytes) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto [group, steps, chunks] = schedule(c);
    for (size_t s = 0; s < steps.size(); ++s) {
      // Nested splits round each level down or up: within 2 elements of bytes / 4.
      EXPECT_NEAR(static_cast<double>(chunks[s].count), steps[s].bytes / 4, 2.0) << "step " << s;
      EXPECT_LE(chunks[s].offset + chunks[s].count, kElements) << "step " << s;
    }
  }
}

TEST(AllreduceChunks, StepsTouchingTheSameElementsOfADeviceAreOrderedByDependencies) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const auto [group, steps, chunks] = schedule(c);
    const size_t count = steps.size();
    std::vector<std::vector<bool>> before(count, std::vector<bool>(count, false));  // before[s][d]: d ends before s starts
    for (size_t s = 0; s < count; ++s) {
      for (size_t d : steps[s].deps) {
        before[s][d] = true;
        for (size_t e = 0; e < count; ++e) before[s][e] = before[s][e] || before[d][e];
      }
    }
    size_t unordered = 0;
    for (size_t a = 0; a < count; ++a) {
      for (size_t b = a + 1; b < count; ++b) {
        const AllreduceChunk &x = chunks[a], &y = chunks[b];
        const bool overlap = x.count > 0 && y.count > 0 && x.offset < y.offset + y.count && y.offset < x.offset + x.count;
        if (!overlap) continue;
        // A step reads its sender's elements and writes its receiver's.
        const bool write_read = steps[a].to == steps[b].from || steps[b].to == steps[a].from;
        const bool write_write = steps[a].to == steps[b].to && !(x.reduces && y.reduces);
        if ((write_read || write_write) && !before[b][a]) {
          ++unordered;
          ADD_FAILURE() << "steps " << a << " and " << b << " may run at once";
        }
      }
    }
    EXPECT_EQ(unordered, 0u);
  }
}

TEST(AllreduceChunks, AScheduleOfAnotherShapeIsAnInternalError) {
  Cluster cluster = shuffled_ring(4);
  const std::vector<DeviceId> group = all_devices(cluster);
  auto ring = allreduce_schedule(CollectiveAlgorithm::kRing, group, 4.0 * kElements, cluster, CollectiveFidelity::kPerRound);
  EXPECT_THROW(real::allreduce_chunks(CollectiveAlgorithm::kDoubleBinaryTree, group, cluster, ring, kElements),
               std::logic_error);
  ring.pop_back();
  EXPECT_THROW(real::allreduce_chunks(CollectiveAlgorithm::kRing, group, cluster, ring, kElements), std::logic_error);
  auto per_phase = allreduce_schedule(CollectiveAlgorithm::kRing, group, 4.0 * kElements, cluster,
                                      CollectiveFidelity::kPerPhase);
  EXPECT_THROW(real::allreduce_chunks(CollectiveAlgorithm::kRing, group, cluster, per_phase, kElements),
               std::logic_error);
}

}  // namespace
}  // namespace placesim

namespace placesim {
namespace {

/// Runs `steps` with their chunks on `buffers` (one per member of `group`), in index order.
void run_steps(const std::vector<DeviceId>& group, const std::vector<CollectiveStep>& steps,
               const std::vector<real::AllreduceChunk>& chunks, std::vector<std::vector<float>>* buffers) {
  for (size_t s = 0; s < steps.size(); ++s) {
    const std::vector<float>& from = (*buffers)[member_of(group, steps[s].from)];
    std::vector<float>& into = (*buffers)[member_of(group, steps[s].to)];
    for (size_t e = chunks[s].offset; e < chunks[s].offset + chunks[s].count; ++e) {
      into[e] = chunks[s].reduces ? into[e] + from[e] : from[e];
    }
  }
}

// A reduce-scatter leaves each device with its part of the sum (ring position p: part (p + 1)
// mod n of each channel's part); an all-gather from those parts leaves every device with all of it: together an
// all-reduce. Rings of 2..8 and hierarchical rings on 2..4 machines; each step moves the elements
// of its scheduled bytes.
TEST(CollectiveChunks, ReduceScatterThenAllGatherLeaveEveryDeviceWithTheSum) {
  std::vector<std::pair<std::string, std::pair<CollectiveAlgorithm, Cluster>>> cases;
  for (size_t n = 2; n <= 8; ++n) {
    cases.push_back({"ring of " + std::to_string(n), {CollectiveAlgorithm::kRing, shuffled_ring(n)}});
  }
  for (auto [nodes, per_node] : std::vector<std::pair<size_t, size_t>>{{2, 1}, {2, 2}, {3, 2}, {2, 4}, {4, 3}}) {
    cases.push_back({"hierarchical " + std::to_string(nodes) + "x" + std::to_string(per_node),
                     {CollectiveAlgorithm::kHierarchical, machines(nodes, per_node)}});
  }
  for (auto [nodes, per_node] : std::vector<std::pair<size_t, size_t>>{{2, 3}, {3, 4}}) {
    cases.push_back({"hierarchical over channels " + std::to_string(nodes) + "x" + std::to_string(per_node),
                     {CollectiveAlgorithm::kHierarchical, linked_machines(nodes, per_node)}});
    EXPECT_EQ(hierarchical_channels(all_devices(cases.back().second.second), cases.back().second.second).size(), 2u);
  }
  for (const auto& [name, setup] : cases) {
    SCOPED_TRACE(name);
    const auto& [algorithm, cluster] = setup;
    const std::vector<DeviceId> group = all_devices(cluster);
    const size_t n = group.size();
    std::vector<std::vector<float>> buffers(n, std::vector<float>(kElements));
    for (size_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < kElements; ++e) buffers[i][e] = contribution(i, e);
    }
    const float all_members = std::ldexp(1.0f, static_cast<int>(n)) - 1;
    auto sum_at = [&](size_t e) { return all_members * static_cast<float>(1 + e % 3); };
    for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
      const auto steps = collective_schedule(kind, algorithm, group, 4.0 * kElements, cluster);
      const auto chunks = real::collective_chunks(kind, algorithm, group, cluster, steps, kElements);
      ASSERT_EQ(chunks.size(), steps.size());
      for (size_t s = 0; s < steps.size(); ++s) {
        EXPECT_NEAR(static_cast<double>(chunks[s].count), steps[s].bytes / 4, 2.0);
        EXPECT_EQ(chunks[s].reduces, kind == CollectiveKind::kReduceScatter);
      }
      run_steps(group, steps, chunks, &buffers);
      if (kind == CollectiveKind::kReduceScatter && algorithm == CollectiveAlgorithm::kRing) {
        // Over NCCL's channels (from 3 GPUs, the cycle each way) channel c holds part c of the
        // buffer, and position p of its ring part (p + 1) mod n of that.
        const auto rings = ring_channels_of(algorithm, group, cluster);
        EXPECT_EQ(rings.size(), n >= 3 ? 2u : 1u);
        size_t wrong = 0;
        for (size_t c = 0; c < rings.size(); ++c) {
          const size_t begin = kElements * c / rings.size(), count = kElements * (c + 1) / rings.size() - begin;
          for (size_t p = 0; p < n; ++p) {
            const size_t owned = (p + 1) % n;
            const std::vector<float>& mine = buffers[member_of(group, rings[c][p])];
            for (size_t e = begin + count * owned / n; e < begin + count * (owned + 1) / n; ++e) {
              wrong += mine[e] != sum_at(e);
            }
          }
        }
        EXPECT_EQ(wrong, 0u);
      }
    }
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t e = 0; e < kElements; ++e) wrong += buffers[i][e] != sum_at(e);
    }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(CollectiveChunks, RefuseAnAllGatherOfAnotherAlgorithmOrSchedule) {
  const Cluster cluster = shuffled_ring(4);
  const std::vector<DeviceId> group = all_devices(cluster);
  const auto ring = collective_schedule(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, group, 4e3, cluster);
  EXPECT_THROW(real::collective_chunks(CollectiveKind::kAllGather, CollectiveAlgorithm::kDoubleBinaryTree, group, cluster,
                                       ring, 1000),
               std::logic_error);
  // An all-reduce's schedule is not an all-gather's.
  const auto all_reduce = allreduce_schedule(CollectiveAlgorithm::kRing, group, 4e3, cluster);
  EXPECT_THROW(real::collective_chunks(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, group, cluster,
                                       all_reduce, 1000),
               std::logic_error);
}

}  // namespace
}  // namespace placesim
