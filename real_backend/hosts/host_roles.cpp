#include "real_backend/hosts/host_roles.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <string>

#include "sim/core/input_error.h"

namespace placesim::real {

std::set<int> task_nodes(const Task& task, const Cluster& cluster) {
  std::set<int> nodes = {cluster.device(task.device).node};
  if (task.kind == TaskKind::kTransfer) nodes.insert(cluster.device(task.source).node);
  if (task.kind == TaskKind::kCollective) {
    for (DeviceId member : task.group) nodes.insert(cluster.device(member).node);
  }
  return nodes;
}

Role transfer_role(int source_node, int node, int rank) {
  if (source_node == node) return node == rank ? Role::kLocal : Role::kRemote;
  if (source_node == rank) return Role::kSend;
  if (node == rank) return Role::kReceive;
  return Role::kRemote;
}

std::vector<Role> task_roles(const ExecutionPlan& plan, const Cluster& cluster, int rank) {
  std::vector<Role> roles(plan.tasks.size(), Role::kRemote);
  for (const Task& task : plan.tasks) {
    const int node = cluster.device(task.device).node;
    if (task.kind == TaskKind::kTransfer) {
      roles[task.id] = transfer_role(cluster.device(task.source).node, node, rank);
    } else if (task.kind == TaskKind::kCollective) {
      const std::set<int> nodes = task_nodes(task, cluster);
      if (nodes.count(rank)) roles[task.id] = nodes.size() > 1 ? Role::kShared : Role::kLocal;
    } else if (node == rank) {
      roles[task.id] = Role::kLocal;
    }
  }
  return roles;
}

int host_count(const Cluster& cluster, const ExecutionPlan& plan) {
  int largest = 0;
  for (const Task& task : plan.tasks) largest = std::max(largest, *task_nodes(task, cluster).rbegin());
  return largest + 1;
}

std::vector<size_t> topological_positions(const ExecutionPlan& plan) {
  using MinHeap = std::priority_queue<TaskId, std::vector<TaskId>, std::greater<>>;
  std::vector<size_t> position(plan.tasks.size()), pending(plan.tasks.size());
  SuccessorLists successors = plan.successors();
  MinHeap ready;
  for (const Task& task : plan.tasks) {
    pending[task.id] = task.deps.size();
    if (pending[task.id] == 0) ready.push(task.id);
  }
  for (size_t next = 0; !ready.empty(); ++next) {
    TaskId id = ready.top();
    ready.pop();
    position[id] = next;
    for (TaskId successor : successors[id]) {
      if (--pending[successor] == 0) ready.push(successor);
    }
  }
  return position;
}

HostGroup* checked_host_group(const ExecutionPlan& plan, const Cluster& cluster, int64_t tags_needed) {
  const std::string where = "plan \"" + plan.name + "\"";
  const int hosts = host_count(cluster, plan);
  HostGroup* group = hosts > 1 || launched_by_mpirun() ? host_group() : nullptr;
  const int rank = group ? group->rank() : 0;
  if (hosts > 1 && !group) {
    throw InputError(where, "",
                     "the plan spans " + std::to_string(hosts) + " hosts (task:0..task:" + std::to_string(hosts - 1) +
                         "): " + (built_with_mpi() ? "run one process per host, e.g. mpirun -np " + std::to_string(hosts) +
                                                        " placesim execute ..."
                                                  : "this placesim was built without MPI (install libopenmpi-dev and "
                                                    "rebuild)"));
  }
  if (group && group->size() != hosts) {
    throw InputError(where, "",
                     "the plan spans " + std::to_string(hosts) + " host(s) but mpirun started " +
                         std::to_string(group->size()) + " processes: run mpirun -np " + std::to_string(hosts));
  }
  if (group && tags_needed > int64_t(group->max_tag()) + 1) {
    throw InputError(where, "", "the plan needs " + std::to_string(tags_needed) + " message tags (" +
                                    std::to_string(plan.tasks.size()) + " tasks and its cross-host collective " +
                                    "messages), more than this MPI's " + std::to_string(group->max_tag()) + " + 1");
  }
  const std::vector<Role> roles = task_roles(plan, cluster, rank);
  for (const Task& task : plan.tasks) {
    if (roles[task.id] == Role::kRemote || roles[task.id] == Role::kReceive) continue;
    for (TaskId dep : task.deps) {
      if (roles[dep] != Role::kRemote) continue;
      // A collective spanning hosts waits for a dep on another of its hosts through that
      // host's part: each host starts its part once its own deps have ended.
      if (roles[task.id] == Role::kShared &&
          std::ranges::includes(task_nodes(task, cluster), task_nodes(plan.tasks[dep], cluster))) {
        continue;
      }
      throw InputError(where, "/tasks/" + std::to_string(task.id),
                       "task \"" + task.name + "\" on task:" + std::to_string(rank) + " depends on \"" +
                           plan.tasks[dep].name + "\" on another host without a transfer between them; the "
                           "multi-host executor needs every cross-host dependency to be a transfer (or a "
                           "collective over both hosts)");
    }
  }
  return group;
}

std::vector<double> own_intervals(const Timeline& timeline, const std::vector<Role>& roles) {
  const size_t n = timeline.tasks.size();
  std::vector<double> mine(2 * n, NAN);
  for (TaskId id = 0; id < n; ++id) {
    const Role role = roles[id];
    const bool runs_here = role == Role::kLocal || role == Role::kShared;
    if (runs_here || role == Role::kSend) mine[2 * id] = timeline.tasks[id].start_seconds;
    if (runs_here || role == Role::kReceive) mine[2 * id + 1] = timeline.tasks[id].end_seconds;
  }
  return mine;
}

void merge_intervals(Timeline& timeline, const std::vector<double>& gathered, int ranks,
                     const std::vector<bool>& spans_hosts) {
  const size_t n = timeline.tasks.size();
  for (TaskId id = 0; id < n; ++id) {
    TaskInterval& interval = timeline.tasks[id];
    if (spans_hosts[id]) interval = {-INFINITY, INFINITY};
    for (int rank = 0; rank < ranks; ++rank) {
      const double start = gathered[size_t(rank) * 2 * n + 2 * id], end = gathered[size_t(rank) * 2 * n + 2 * id + 1];
      if (spans_hosts[id]) {
        if (!std::isnan(start)) interval.start_seconds = std::max(interval.start_seconds, start);
        if (!std::isnan(end)) interval.end_seconds = std::min(interval.end_seconds, end);
        continue;
      }
      if (!std::isnan(start)) interval.start_seconds = start;
      if (!std::isnan(end)) interval.end_seconds = end;
    }
  }
}

void merge_on_root(Timeline& timeline, const std::vector<Role>& roles, const std::vector<bool>& spans_hosts,
                   HostGroup& group) {
  std::vector<double> all = group.gather_to_root(own_intervals(timeline, roles));
  if (!all.empty()) merge_intervals(timeline, all, group.size(), spans_hosts);
}

}  // namespace placesim::real
