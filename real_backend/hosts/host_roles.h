// A plan that spans hosts, as the executors see it (one MPI rank per host, rank r = the
// cluster's node r): what this host does with each task, the checks such a plan must pass, the
// order both ends of a cross-host channel run its jobs in, and the merge of the hosts' timelines
// on rank 0. Shared by the CPU executor (MPI messages for everything) and the CUDA executor
// (MPI-staged transfers, NCCL bootstrapped over MPI for all-reduces).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "real_backend/hosts/host_group.h"
#include "sim/cluster/cluster.h"
#include "sim/plan/execution_plan.h"
#include "sim/timeline/timeline.h"

namespace placesim::real {

/// What this process does with a task, or with one step of a collective: runs it, sends or
/// receives a cross-host transfer's (or step's) bytes, takes part in a collective whose group
/// spans hosts (kShared: runs its part on its devices), or leaves it to another rank. On one
/// host every task and step is kLocal.
enum class Role { kLocal, kSend, kReceive, kShared, kRemote };

/// The cluster nodes (hosts) whose devices a task uses.
std::set<int> task_nodes(const Task& task, const Cluster& cluster);

/// Who moves one piece of data: from `source_node` to `node`, seen from `rank`.
Role transfer_role(int source_node, int node, int rank);

/// Each task's role on `rank`.
std::vector<Role> task_roles(const ExecutionPlan& plan, const Cluster& cluster, int rank);

/// 1 + the highest node any task uses.
int host_count(const Cluster& cluster, const ExecutionPlan& plan);

/// Each task's position in a topological order of the plan (the ready task with the lowest id
/// first): the order both ends of a cross-host channel, and every rank of a communicator, take
/// their jobs in, so that none waits for a message or a call another rank makes only later.
std::vector<size_t> topological_positions(const ExecutionPlan& plan);

/// The host group the plan needs (null for a one-host plan outside mpirun), after checking that
/// mpirun started one process per host, that `tags_needed` MPI tags exist, and that every task
/// this rank runs depends on other hosts' tasks only through a transfer it receives or a
/// collective over both hosts. InputError naming the plan (and the task) otherwise.
HostGroup* checked_host_group(const ExecutionPlan& plan, const Cluster& cluster, int64_t tags_needed);

/// This host's figures for the merge: per task, 2 x (start, end), NaN where another host has
/// the figure (a transfer's start is its sender's, its end its receiver's).
std::vector<double> own_intervals(const Timeline& timeline, const std::vector<Role>& roles);

/// On rank 0, with every rank's own_intervals concatenated in rank order: a task's interval
/// comes from the host(s) that ran it; a collective over several hosts (`spans_hosts`) starts
/// when the last of them started its part and ends when the first had its sums.
void merge_intervals(Timeline& timeline, const std::vector<double>& gathered, int ranks,
                     const std::vector<bool>& spans_hosts);

/// own_intervals, gathered on rank 0 and merged there; other ranks keep their partial timeline.
void merge_on_root(Timeline& timeline, const std::vector<Role>& roles, const std::vector<bool>& spans_hosts,
                   HostGroup& group);

}  // namespace placesim::real
