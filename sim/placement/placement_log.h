// The placement log in TensorFlow 1.x's log_device_placement form, for one TensorFlow release
// (TensorFlowVersion, "run": {"tensorflow_version": ...}) so one output never mixes its names:
//   Device mapping:
//   /job:localhost/replica:0/task:0/device:GPU:0 -> device: 0, name: GeForce GTX 850M, pci bus id: 0000:01:00.0, compute capability: 5.0
//   b: (VariableV2): /job:localhost/replica:0/task:0/device:CPU:0
// (1.3 and earlier: /job:localhost/replica:0/task:0/gpu:0 and .../cpu:0).
//
// The op lines come in the order TensorFlow's placer assigns and logs them (placer_log_order),
// not in graph order. Sources, TensorFlow 1.x:
//  - tensorflow/core/graph/graph_constructor.cc, GraphConstructor::InitFromEdges and Convert:
//    the GraphDef's nodes become graph nodes (ids in creation order) in a topological order;
//    the ready nodes start as those without inputs (data or control) in GraphDef order, and
//    each converted node makes ready, in GraphDef order, the consumers whose last input it was.
//    Up to 1.5 at least (read at 1.5.0-rc0) ready_ is a std::vector taken from the back (a
//    stack); at 1.12 (read) it is a std::set<int> taken smallest index first, which is the
//    GraphDef order itself. The switch lies between 1.6 and 1.12; placesim switches at 1.12.
//  - tensorflow/core/common_runtime/simple_placer.cc (1.0 .. 1.3) and placer.cc (1.4 ..):
//    Run() walks graph_->op_nodes() in id order and assigns and logs every node but the
//    "generators" (IsGeneratorNode: no data inputs, one output, not of reference type: Const,
//    Placeholder), which it keeps in second_pass and assigns and logs afterwards, in id order.
// Published logs this reproduces (docs/placement.md lists them with the derivations):
//  - the seed's `a + b` (variables on /cpu:0, add on /gpu:0, GeForce GTX 850M), TF 1.x:
//    b, b/read, b/Assign, a, a/read, add, a/Assign, init, Const_1, Const;
//  - github.com/sanjin145/KaggleCode tensorflow_study/gpu_test.py (TF <= 1.3): add, b, a;
//  - github.com/snkey-todo/MachineLearning TF-TensorFlow/log_device_placement.py (GraphDef
//    order, a later 1.x): Add, Const, Const_1;
//  - github.com/tensorflow/tensorflow/issues/18146 (placer.cc, 2018): the Adam slots'
//    initial values logged last and newest first (beta2_power before beta1_power).
#pragma once

#include <string>
#include <vector>

#include "sim/placement/placement.h"
#include "sim/spec/tensorflow_version.h"

namespace placesim {

/// The "Device mapping:" block (accelerators only, as TensorFlow prints it). Each GPU of a machine
/// has its own PCI bus id: its cluster template's, else its profile's for the machine's first GPU
/// of that profile and, for the k-th, the profile's bus number + k (pci_bus_id_of).
std::string device_mapping(const Cluster& cluster, TensorFlowVersion version = {});
/// The full log: device mapping, then one line per op in the placer's order (placer_log_order).
std::string placement_log(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                          TensorFlowVersion version = {});

/// The ops of `graph` (whose op ids are its GraphDef order) in the order TensorFlow's placer logs
/// them: node ids as GraphConstructor numbers them (`order`), non-generators first, then the
/// generators (ops without data inputs with one output that is not a reference: Const,
/// Placeholder), each pass in node id order.
std::vector<OpId> placer_log_order(const OpGraph& graph, NodeIdOrder order);
/// TensorFlow's IsGeneratorNode: no data inputs and one non-reference output (not a variable, not
/// an op without outputs such as NoOp).
bool is_generator(const OpGraph& graph, OpId id);

/// The graph a data-parallel run places, as in-graph replication (one tower per replica) builds
/// it: every op of each replica r as "tower_<r>/<name>" on replica r's device, towers in replica
/// order, except the ops of `shared_device` (variables on parameter servers), which appear once,
/// unprefixed and first, on their server, and feed every tower.
struct ReplicatedGraph {
  OpGraph graph;
  Placement placement;
};
ReplicatedGraph replicate_for_log(const OpGraph& graph, const std::vector<DeviceId>& replicas,
                                  const std::vector<std::pair<OpId, DeviceId>>& shared_device);

/// "0000:06:00.0" with `offset` added to its bus number ("0000:07:00.0" for 1); `bus_id` itself
/// when it is not of the DOMAIN:BUS:DEVICE.FUNCTION form or the bus would pass 0xff.
std::string pci_bus_id_of(const std::string& bus_id, int offset);

}  // namespace placesim
