// The data each step of a collective schedule (all-reduce, ring all-gather or reduce-scatter) carries. A schedule (sim/plan/collective_schedule.h,
// per-round fidelity) says only who sends how many bytes to whom after which steps; to execute it
// on real buffers an executor also needs which elements a step moves and whether the receiver adds
// them to its own (reduce-scatter, tree reduce) or overwrites its own with them (all-gather, tree
// broadcast). This recovers that from each algorithm's structure; executing the steps in
// dependency order then leaves every device of the group with the elementwise sum.
#pragma once

#include <cstddef>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/spec/collective_algorithm.h"
#include "sim/plan/collective_schedule.h"

namespace placesim::real {

/// Elements [offset, offset + count) of the sender's buffer, added into (reduces) or copied over
/// the same elements of the receiver's buffer, or, where `into_offset` is set (an all-to-all's
/// parts), copied to the receiver's elements [into_offset, into_offset + count).
struct AllreduceChunk {
  static constexpr size_t kSameOffset = static_cast<size_t>(-1);
  size_t offset = 0;
  size_t count = 0;
  bool reduces = false;
  size_t into_offset = kSameOffset;
  /// Where the receiver's elements begin.
  size_t destination() const { return into_offset == kSameOffset ? offset : into_offset; }
};

/// One chunk per step of `steps`, which must be allreduce_schedule(algorithm, group, S, cluster,
/// CollectiveFidelity::kPerRound), over buffers of `elements` elements. Where the schedule splits
/// S into k equal parts, part i is elements [elements * i / k, elements * (i + 1) / k). Throws
/// std::logic_error when the steps do not have the structure of that algorithm's schedule (the
/// schedule changed without this function).
std::vector<AllreduceChunk> allreduce_chunks(CollectiveAlgorithm algorithm, const std::vector<DeviceId>& group,
                                             const Cluster& cluster, const std::vector<CollectiveStep>& steps,
                                             size_t elements);

/// Elements each member's buffer holds for a collective of `kind` over `group` carrying `bytes`:
/// ceil(bytes / 4) floats; an all-to-all's, rounded up to a multiple of the group's size (its n
/// equal parts).
size_t collective_elements(CollectiveKind kind, const std::vector<DeviceId>& group, double bytes);

/// Elements a member's buffer needs for that collective: `elements`, or twice that for an
/// all-to-all, which runs out of place as NCCL's does (the parts to send, then the parts received).
size_t collective_buffer_elements(CollectiveKind kind, size_t elements);

/// The same for a collective of `kind`: allreduce_chunks for an all-reduce; for an all-to-all
/// (pairwise exchanges, collective_schedule's n(n-1) steps, sender i then receiver j), part j of
/// member i's first `elements` copied to member j's received part i, at elements + i x part; for an all-gather or
/// reduce-scatter (collective_schedule's steps, per round), the second or first half of the
/// all-reduce of the same algorithm (ring or hierarchical): a reduce-scatter leaves each device
/// with the part of the sum that device holds reduced half-way through that all-reduce (ring
/// position p: part (p + 1) mod N; over NCCL's channels, ring_channels_of, that part of each
/// channel's part of the buffer), and an all-gather starts from those parts and leaves every
/// device with all of them.
std::vector<AllreduceChunk> collective_chunks(CollectiveKind kind, CollectiveAlgorithm algorithm,
                                              const std::vector<DeviceId>& group, const Cluster& cluster,
                                              const std::vector<CollectiveStep>& steps, size_t elements);

}  // namespace placesim::real
