#include "real_backend/cuda/cuda_nccl_group.h"

#ifdef PLACESIM_WITH_NCCL
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "real_backend/cuda/cuda_status.h"
#include "real_backend/hosts/host_group.h"

namespace placesim::real {
namespace {

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
}

}  // namespace

void open_nccl_group(const NcclMembers& members, HostGroup* hosts, NcclGroup* group) {
  group->ordinals = members.ordinals;
  const size_t n = group->ordinals.size();  // this host's members
  group->comms.assign(n, nullptr);
  if (!group->spans_hosts) {
    check_nccl(ncclCommInitAll(group->comms.data(), int(n), group->ordinals.data()), "ncclCommInitAll");
  } else {
    // The host of member 0 makes the unique id and sends it to the group's other hosts.
    ncclUniqueId id;
    if (members.this_host == members.root_host) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      for (int host : members.hosts) {
        if (host != members.root_host) hosts->send(host, group->id_tag, &id, sizeof id);
      }
    } else {
      hosts->receive(members.root_host, group->id_tag, &id, sizeof id);
    }
    // Several communicator ranks in one thread: one NCCL group call around their inits.
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (size_t k = 0; k < n; ++k) {
      check(cudaSetDevice(group->ordinals[k]), "cudaSetDevice");
      check_nccl(ncclCommInitRank(&group->comms[k], members.group_size, id, members.ranks[k]), "ncclCommInitRank");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  group->streams.assign(n, nullptr);
  group->buffers.assign(n, nullptr);
  group->member_done.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    check(cudaSetDevice(group->ordinals[i]), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&group->streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&group->buffers[i], group->elements * sizeof(float)), "all-reduce buffer");
    check(cudaMemset(group->buffers[i], 0, group->elements * sizeof(float)), "cudaMemset");
    check(cudaEventCreateWithFlags(&group->member_done[i], cudaEventDisableTiming), "cudaEventCreate");
  }
}

void close_nccl_group(NcclGroup* group) {
  for (size_t i = 0; i < group->ordinals.size(); ++i) {
    cudaSetDevice(group->ordinals[i]);
    if (group->streams[i]) cudaStreamSynchronize(group->streams[i]);
    if (group->comms[i]) ncclCommDestroy(group->comms[i]);
    if (group->buffers[i]) cudaFree(group->buffers[i]);
    if (group->member_done[i]) cudaEventDestroy(group->member_done[i]);
    if (group->streams[i]) cudaStreamDestroy(group->streams[i]);
  }
  *group = NcclGroup{};
}

void enqueue_nccl_collective(NcclGroup& group, CollectiveKind kind, double bytes, size_t ranks, cudaEvent_t start) {
  // An all-to-all's input takes the first half of the buffer (open_nccl_group sized it twice).
  const size_t capacity = kind == CollectiveKind::kAllToAll ? group.elements / 2 : group.elements;
  const size_t count = std::max<size_t>(group.spans_hosts ? 1 : 0, std::min(capacity, size_t(std::ceil(bytes / sizeof(float)))));
  // Gathers and scatters move count / N elements per rank (at least one where anything moves).
  const size_t per_rank = count == 0 ? 0 : std::max<size_t>(1, count / ranks);
  check(cudaSetDevice(group.ordinals.front()), "cudaSetDevice");
  check(cudaEventRecord(start, group.streams.front()), "cudaEventRecord");
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (size_t i = 0; i < group.ordinals.size(); ++i) {
    check(cudaSetDevice(group.ordinals[i]), "cudaSetDevice");
    int rank = 0;
    check_nccl(ncclCommUserRank(group.comms[i], &rank), "ncclCommUserRank");
    float* own_part = group.buffers[i] + size_t(rank) * per_rank;
    switch (kind) {
      case CollectiveKind::kAllGather:
        check_nccl(ncclAllGather(own_part, group.buffers[i], per_rank, ncclFloat, group.comms[i], group.streams[i]),
                   "ncclAllGather");
        break;
      case CollectiveKind::kReduceScatter:
        check_nccl(ncclReduceScatter(group.buffers[i], own_part, per_rank, ncclFloat, ncclSum, group.comms[i],
                                     group.streams[i]),
                   "ncclReduceScatter");
        break;
      case CollectiveKind::kAllToAll:
        // Part r of this rank's input to rank r, part r of its output from rank r: NCCL's
        // all-to-all as grouped point-to-point calls (NCCL has no ncclAllToAll; its
        // alltoall_perf does the same).
        for (size_t peer = 0; peer < ranks; ++peer) {
          check_nccl(ncclSend(group.buffers[i] + peer * per_rank, per_rank, ncclFloat, int(peer), group.comms[i],
                              group.streams[i]),
                     "ncclSend");
          check_nccl(ncclRecv(group.buffers[i] + capacity + peer * per_rank, per_rank, ncclFloat, int(peer),
                              group.comms[i], group.streams[i]),
                     "ncclRecv");
        }
        break;
      default:
        check_nccl(ncclAllReduce(group.buffers[i], group.buffers[i], count, ncclFloat, ncclSum, group.comms[i],
                                 group.streams[i]),
                   "ncclAllReduce");
    }
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  for (size_t i = 1; i < group.ordinals.size(); ++i) {
    check(cudaSetDevice(group.ordinals[i]), "cudaSetDevice");
    check(cudaEventRecord(group.member_done[i], group.streams[i]), "cudaEventRecord");
    check(cudaSetDevice(group.ordinals.front()), "cudaSetDevice");
    check(cudaStreamWaitEvent(group.streams.front(), group.member_done[i], 0), "cudaStreamWaitEvent");
  }
}

}  // namespace placesim::real
#endif
