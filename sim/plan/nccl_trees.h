// NCCL's all-reduce trees (2.4 and later): inside each machine a chain through its GPUs, between
// machines a double binary tree over the machines' chain heads, each of the two trees reducing
// half the buffer up to its root and broadcasting it back down, pipelined in chunks
// (docs/communication.md, "NCCL's trees").
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "sim/cluster/cluster.h"

namespace placesim {

/// One edge of a reduction tree: `child` sends its partial sum up to `parent` and receives the
/// reduced result back down from it.
struct TreeEdge {
  DeviceId child = 0;
  DeviceId parent = 0;
};

/// A reduction tree over a group: every member but the root has one parent.
struct ReductionTree {
  DeviceId root = 0;
  /// Leaves first: every edge comes after every edge into its child (the reduce's order; the
  /// broadcast walks them backwards).
  std::vector<TreeEdge> edges;
  /// Edges on the longest path from a member up to the root.
  size_t depth = 0;
};

/// The chain NCCL's tree runs through `members` of one machine: the order of members whose
/// slowest consecutive pair (route bandwidth, the narrower way) is fastest, as NCCL's search takes
/// the fastest path through a machine's GPUs (src/graph/search.cc, ncclTopoCompute: a tree
/// pattern needs no hop back to the first GPU, so five GPUs of a DGX-1 with one NVLink between
/// GPU 4 and the others chain over NVLink where no ring closes); searched depth-first from
/// members.front() (members in order), at each pair bandwidth the group has, fastest first; over
/// kMaxChainSearchMembers members, or when the search runs long, topology_ring's ring cut open
/// at its slowest hop. Memoized in the cluster.
std::vector<DeviceId> node_chain(const std::vector<DeviceId>& members, const Cluster& cluster);
constexpr size_t kMaxChainSearchMembers = 16;

/// NCCL's two trees over `group` (src/graph/trees.cc's double binary tree, rebuilt from its
/// description): each machine's members chained by node_chain, the chain's first member its head,
/// every later one the child of the one before it; the machines (in order of first appearance,
/// positions 0..M-1) joined through their heads by two binary trees. Tree 0: position 0 is the
/// root with one child, the largest power of two below M; position p > 0 with t trailing zero
/// bits has children p - 2^(t-1) and the first of p + 2^(t-1), p + 2^(t-2), ... below M, so the
/// odd positions are its leaves. Tree 1 places machine i at position M-1-i (M even) or
/// (i+1) mod M (M odd), so that a machine inner in one tree is a leaf in the other and each
/// machine's network card carries the same traffic. One machine: both trees its chain.
std::array<ReductionTree, 2> nccl_trees(const std::vector<DeviceId>& group, const Cluster& cluster);

/// Bytes of one pipeline chunk of a tree moving `bytes_per_tree` over `depth` levels, as NCCL
/// sizes them (src/enqueue.cc, the tree's Simple protocol): one step of its 4 MiB buffer
/// (NCCL_BUFFSIZE / NCCL_STEPS = 512 KiB), halved while the tree has fewer than 8 x depth chunks
/// and the chunk is over 128 KiB, then fewer than 4 x depth over 64 KiB, then fewer than depth
/// over 32 KiB; never more than the bytes.
double tree_chunk_bytes(double bytes_per_tree, size_t depth);

/// Chunks a per-round tree schedule splits each tree's bytes into: ceil(bytes / chunk), at least
/// 1 and at most kMaxTreeChunks (a plan's size; beyond it each chunk is larger than NCCL's and the
/// pipeline fills in fewer, larger steps).
size_t tree_chunk_count(double bytes_per_tree, size_t depth);
constexpr size_t kMaxTreeChunks = 64;

}  // namespace placesim
