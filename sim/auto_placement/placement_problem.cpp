#include "sim/auto_placement/placement_problem.h"

#include <algorithm>
#include <numeric>

#include "sim/spec/spec_error.h"
#include "sim/cost/cost_model.h"
#include "sim/planner/step_emitter.h"

namespace placesim {
namespace {

/// The same rule as the step emitter: ops with parameters and everything downstream of them
/// through data edges have a backward pass; NoOps never do.
std::vector<bool> ops_needing_gradients(const OpGraph& graph, const std::vector<OpId>& order, const RunOptions& run) {
  std::vector<bool> needed(graph.size(), false);
  if (run.kind != StepKind::kTraining) return needed;
  for (OpId v : order) {
    if (graph.op(v).kind == OpKind::kNoOp) continue;
    needed[v] = graph.op(v).parameter_count > 0;
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && needed[input.op]) needed[v] = true;
    }
  }
  return needed;
}

OpId leader(std::vector<OpId>& parent, OpId v) {
  while (parent[v] != v) v = parent[v] = parent[parent[v]];
  return v;
}

}  // namespace

bool PlacementProblem::allowed(OpId v, DeviceId d) const {
  if (capacity_bytes[d] <= 0) return false;
  return !cpu_only[group_of[v]] || cluster->device(d).spec.kind == DeviceKind::kCpu;
}

double PlacementProblem::transfer_seconds(double bytes, DeviceId from, DeviceId to) const {
  if (from == to) return 0;
  size_t index = from * cluster->devices().size() + to;
  return route_latency_seconds[index] + bytes * route_seconds_per_byte[index];
}

double PlacementProblem::edge_seconds(OpId u, OpId v, double edge_bytes, DeviceId from, DeviceId to) const {
  if (from == to) return 0;
  double seconds = transfer_seconds(graph->op(u).output_bytes, from, to);
  if (needs_gradient[u] && needs_gradient[v]) seconds += transfer_seconds(edge_bytes, to, from);
  return seconds;
}

std::vector<DeviceId> PlacementProblem::accelerators_or_cpus() const {
  std::vector<DeviceId> accelerators, cpus;
  for (DeviceId d : devices) (cluster->device(d).spec.kind == DeviceKind::kCpu ? cpus : accelerators).push_back(d);
  return accelerators.empty() ? cpus : accelerators;
}

void PlacementProblem::fail(const std::string& message) const { throw SpecError::strategy("placement/auto", message); }

PlacementProblem make_placement_problem(const OpGraph& graph, const Cluster& cluster, const RunOptions& run,
                                        const AutoPlacementOptions& options) {
  PlacementProblem problem;
  problem.graph = &graph;
  problem.cluster = &cluster;
  problem.run = run;
  const size_t n = graph.size();
  const size_t device_count = cluster.devices().size();
  std::vector<std::string> cycle;
  if (!graph.topological_order(&problem.order, &cycle)) {
    std::string names;
    for (const auto& name : cycle) names += (names.empty() ? "" : " -> ") + name;
    problem.fail("the graph has a cycle (" + names + "): it cannot be placed");
  }
  problem.position.assign(n, 0);
  for (size_t i = 0; i < problem.order.size(); ++i) problem.position[problem.order[i]] = i;

  // Colocation groups (union-find); the leader is the group's first op in graph order.
  std::vector<OpId> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (OpId v = 0; v < n; ++v) {
    const std::string& other = graph.op(v).colocate_with;
    if (other.empty()) continue;
    OpId a = leader(parent, v), b = leader(parent, graph.find(other));
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  problem.group_of.resize(n);
  problem.members.assign(n, {});
  problem.cpu_only.assign(n, false);
  for (OpId v = 0; v < n; ++v) problem.group_of[v] = leader(parent, v);
  for (OpId v : problem.order) problem.members[problem.group_of[v]].push_back(v);
  for (OpId v = 0; v < n; ++v) {
    if (graph.op(v).cpu_only) problem.cpu_only[problem.group_of[v]] = true;
  }
  problem.needs_gradient = ops_needing_gradients(graph, problem.order, run);

  problem.devices = options.devices;
  if (problem.devices.empty()) {
    problem.devices.resize(device_count);
    std::iota(problem.devices.begin(), problem.devices.end(), 0);
  }
  std::sort(problem.devices.begin(), problem.devices.end());
  problem.capacity_bytes.assign(device_count, 0);
  for (DeviceId d : problem.devices) {
    problem.capacity_bytes[d] = cluster.device(d).spec.memory_bytes * options.memory_fraction;
  }
  for (OpId v = 0; v < n; ++v) {
    if (!problem.cpu_only[problem.group_of[v]]) continue;
    bool has_cpu = std::any_of(problem.devices.begin(), problem.devices.end(),
                               [&](DeviceId d) { return cluster.device(d).spec.kind == DeviceKind::kCpu; });
    if (!has_cpu) {
      problem.fail("op \"" + graph.op(v).name + "\" runs on a CPU only (its colocation group has a CPU-only op), " +
                   "and the placer may use no CPU");
    }
  }

  problem.compute_seconds.assign(n, std::vector<double>(device_count, 0));
  for (OpId v = 0; v < n; ++v) {
    const Op& op = graph.op(v);
    for (DeviceId d : problem.devices) {
      const ClusterDevice& device = cluster.device(d);
      double seconds = compute_seconds(op_compute_task(op, Phase::kForward, run.kind, d, 0), run.precision, run.memory_format, device);
      if (problem.needs_gradient[v]) {
        seconds += compute_seconds(op_compute_task(op, Phase::kBackward, run.kind, d, 0), run.precision, run.memory_format, device);
      }
      problem.compute_seconds[v][d] = seconds;
    }
  }

  problem.route_latency_seconds.assign(device_count * device_count, 0);
  problem.route_seconds_per_byte.assign(device_count * device_count, 0);
  for (DeviceId a : problem.devices) {
    for (DeviceId b : problem.devices) {
      if (a == b) continue;
      // uncontended_transfer_seconds is latency + bytes / bottleneck bandwidth: affine in bytes.
      constexpr double kProbeBytes = 1e9;
      double latency = uncontended_transfer_seconds(0, a, b, cluster);
      problem.route_latency_seconds[a * device_count + b] = latency;
      problem.route_seconds_per_byte[a * device_count + b] =
          (uncontended_transfer_seconds(kProbeBytes, a, b, cluster) - latency) / kProbeBytes;
    }
  }

  // Bottom levels (ETF's tie-break, Hwang et al. 1989): mean compute time over allowed devices.
  problem.bottom_level_seconds.assign(n, 0);
  for (auto it = problem.order.rbegin(); it != problem.order.rend(); ++it) {
    OpId v = *it;
    double sum = 0;
    size_t count = 0;
    for (DeviceId d : problem.devices) {
      if (!problem.allowed(v, d)) continue;
      sum += problem.compute_seconds[v][d];
      ++count;
    }
    double longest_tail = 0;
    for (const auto& output : graph.outputs(v)) longest_tail = std::max(longest_tail, problem.bottom_level_seconds[output.op]);
    problem.bottom_level_seconds[v] = (count ? sum / static_cast<double>(count) : 0) + longest_tail;
  }
  return problem;
}

}  // namespace placesim
