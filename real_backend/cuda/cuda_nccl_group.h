// One collective group of a plan on NCCL (the CUDA executor's all-reduces, all-gathers and
// reduce-scatters): a communicator, a stream, a buffer of the group's largest collective and an
// event per member GPU on this host. Opened with ncclCommInitAll, or, for a group spanning hosts,
// with ncclCommInitRank from the unique id its first member's host sends the others over MPI.
// A collective is timed on member 0's stream, which waits for the other members' ends. Compiled
// only when CMake found NCCL (PLACESIM_WITH_NCCL). Not thread-safe: the dispatch loop's.
#pragma once

#ifdef PLACESIM_WITH_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <set>
#include <vector>

#include "sim/cluster/collective_profile.h"

namespace placesim::real {

class HostGroup;

struct NcclGroup {
  std::vector<int> ordinals;  ///< this host's member GPUs, in group order
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<float*> buffers;
  std::vector<cudaEvent_t> member_done;
  size_t elements = 0;       ///< of the group's largest collective
  bool spans_hosts = false;  ///< members on several hosts: communicators from ncclCommInitRank
  int id_tag = -1;           ///< ... and the MPI tag its unique id travels with
};

/// Where a group's members are: this host's GPUs (`ordinals`) with their indices in the group
/// (`ranks`), the group's size, and for a group spanning hosts the hosts, the root (member 0's)
/// and this one.
struct NcclMembers {
  std::vector<int> ordinals;
  std::vector<int> ranks;
  int group_size = 0;
  std::set<int> hosts;
  int root_host = 0;
  int this_host = 0;
};

/// Opens `group` (its `elements`, `spans_hosts` and `id_tag` set): communicators, streams,
/// zeroed buffers and events. `hosts` sends and receives the unique id of a group spanning hosts.
void open_nccl_group(const NcclMembers& members, HostGroup* hosts, NcclGroup* group);

/// Waits for the group's streams and frees what open_nccl_group made; the group is empty after.
void close_nccl_group(NcclGroup* group);

/// Records `start` on member 0's stream, runs one collective of `bytes` on every member (one
/// NCCL group call: ncclAllReduce of `bytes`; ncclAllGather / ncclReduceScatter of `bytes` in
/// total, bytes / N per rank, in place; an all-to-all as an ncclSend and an ncclRecv of bytes / N
/// per peer, out of place: the group's buffers hold twice its largest all-to-all) and makes
/// member 0's stream wait for every member's end.
void enqueue_nccl_collective(NcclGroup& group, CollectiveKind kind, double bytes, size_t ranks, cudaEvent_t start);

}  // namespace placesim::real
#endif
