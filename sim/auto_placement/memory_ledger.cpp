#include "sim/auto_placement/memory_ledger.h"

#include <algorithm>

#include "sim/planner/memory_model.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

bool launches_forward(const Op& op) { return op.forward_flops > 0 || op.forward_bytes > 0; }
bool needs_workspace(const Op& op) { return is_gemm_kind(op.kind); }

}  // namespace

MemoryLedger::MemoryLedger(const PlacementProblem& problem)
    : problem_(problem),
      used_(problem.cluster->devices().size(), 0),
      workspace_(problem.cluster->devices().size(), 0),
      reserved_(problem.graph->size(), 0),
      device_of_(problem.graph->size()),
      group_device_(problem.graph->size()) {}

double MemoryLedger::gradient_room_bytes(OpId v) const {
  double bytes = 0;
  for (const auto& output : problem_.graph->outputs(v)) {
    if (!output.edge.control && problem_.needs_gradient[v] && problem_.needs_gradient[output.op]) bytes += output.edge.bytes;
  }
  return bytes;
}

double MemoryLedger::own_bytes(OpId v) const {
  const OpGraph& graph = *problem_.graph;
  const Op& op = graph.op(v);
  double forward_output = launches_forward(op) ? op.output_bytes : 0;
  double backward_output = 0;
  if (problem_.needs_gradient[v]) {
    for (const auto& input : graph.inputs(v)) {
      if (!input.edge.control && problem_.needs_gradient[input.op]) backward_output += input.edge.bytes;
    }
  }
  double workspace = needs_workspace(op) ? std::max(forward_output, backward_output) : 0;
  return op_static_memory(op, problem_.run).total() + forward_output + backward_output + workspace +
         gradient_room_bytes(v);
}

double MemoryLedger::worst_case_bytes(OpId v) const {
  double bytes = own_bytes(v);
  for (const auto& input : problem_.graph->inputs(v)) {
    if (!input.edge.control) bytes += problem_.graph->op(input.op).output_bytes;
  }
  return bytes;
}

double MemoryLedger::charge(OpId v, DeviceId d) const {
  const OpGraph& graph = *problem_.graph;
  const Op& op = graph.op(v);
  double forward_output = launches_forward(op) ? op.output_bytes : 0;
  double backward_output = 0;
  double bytes = op_static_memory(op, problem_.run).total() + forward_output + gradient_room_bytes(v);
  std::set<OpId> copied;
  for (const auto& input : graph.inputs(v)) {
    if (input.edge.control) continue;
    bool gradient = problem_.needs_gradient[v] && problem_.needs_gradient[input.op];
    if (gradient) backward_output += input.edge.bytes;
    if (*device_of_[input.op] == d) {
      if (gradient) bytes -= input.edge.bytes;  // the producer's room for this gradient: not needed
      continue;
    }
    // The forward tensor is sent once per (producer, destination), as the step emitter does.
    if (!received_.count({input.op, d}) && copied.insert(input.op).second) bytes += graph.op(input.op).output_bytes;
  }
  bytes += backward_output;
  if (needs_workspace(op)) bytes += std::max(0.0, std::max(forward_output, backward_output) - workspace_[d]);
  bytes -= reserved_[v];
  if (!group_device_[problem_.group_of[v]]) {
    for (OpId member : problem_.members[problem_.group_of[v]]) {
      if (member != v) bytes += worst_case_bytes(member);
    }
  }
  return bytes;
}

bool MemoryLedger::fits(OpId v, DeviceId d) const {
  if (!problem_.allowed(v, d)) return false;
  if (auto group = group_device_[problem_.group_of[v]]; group && *group != d) return false;
  double bytes = charge(v, d);
  // A tolerance of one byte in a billion absorbs rounding in the sums.
  return bytes <= 0 || used_[d] + bytes <= problem_.capacity_bytes[d] * (1 + 1e-9);
}

void MemoryLedger::place(OpId v, DeviceId d) {
  const OpGraph& graph = *problem_.graph;
  used_[d] += charge(v, d);
  OpId leader = problem_.group_of[v];
  if (!group_device_[leader]) {
    group_device_[leader] = d;
    for (OpId member : problem_.members[leader]) {
      if (member != v) reserved_[member] = worst_case_bytes(member);
    }
  }
  reserved_[v] = 0;
  for (const auto& input : graph.inputs(v)) {
    if (!input.edge.control && *device_of_[input.op] != d) received_.insert({input.op, d});
  }
  const Op& op = graph.op(v);
  if (needs_workspace(op)) {
    double forward_output = launches_forward(op) ? op.output_bytes : 0;
    double backward_output = 0;
    if (problem_.needs_gradient[v]) {
      for (const auto& input : graph.inputs(v)) {
        if (!input.edge.control && problem_.needs_gradient[input.op]) backward_output += input.edge.bytes;
      }
    }
    workspace_[d] = std::max({workspace_[d], forward_output, backward_output});
  }
  device_of_[v] = d;
}

void MemoryLedger::fail_no_room(OpId v, const std::string& algorithm) const {
  const Cluster& cluster = *problem_.cluster;
  std::string rooms;
  for (DeviceId d : problem_.devices) {
    if (!problem_.allowed(v, d)) continue;
    rooms += (rooms.empty() ? "" : ", ") + cluster.device(d).name.local() + " has " +
             format_bytes(std::max(0.0, problem_.capacity_bytes[d] - used_[d])) + " free of " +
             format_bytes(problem_.capacity_bytes[d]);
  }
  const Op& op = problem_.graph->op(v);
  StaticMemory fixed = op_static_memory(op, problem_.run);
  problem_.fail(algorithm + " found no device with room for op \"" + op.name + "\": it needs " +
                format_bytes(own_bytes(v)) + " (parameters, gradients and optimizer state " + format_bytes(fixed.total()) +
                ", activations and workspace " + format_bytes(own_bytes(v) - fixed.total()) +
                ") plus copies of its inputs; " + (rooms.empty() ? "no device may run it" : rooms) +
                (problem_.cpu_only[problem_.group_of[v]] ? " (it runs on CPUs only)" : ""));
}

}  // namespace placesim
