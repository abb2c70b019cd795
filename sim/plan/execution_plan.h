// ExecutionPlan: the one object the simulator and the real backend share — a DAG of compute
// and transfer tasks for K training (or inference) steps, each with its device(s), its
// dependencies and the cost inputs (FLOPs, bytes, precision). It knows devices only by their
// DeviceId in a Cluster; it never refers to scenarios or model graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/cluster/collective_profile.h"
#include "sim/cluster/transport.h"
#include "sim/core/memory_format.h"
#include "sim/core/precision.h"
#include "sim/graph/op.h"
#include "sim/spec/collective_algorithm.h"
#include "sim/plan/plan_symmetry.h"

namespace placesim {

using TaskId = std::size_t;

enum class TaskKind { kCompute, kTransfer, kCollective };
std::string to_string(TaskKind kind);

/// What part of a step a task belongs to (trace category and report breakdown).
enum class Phase {
  kForward,
  kBackward,
  kOptimizer,
  kTransfer,    ///< activations/gradients crossing devices inside one replica
  kCollective,  ///< gradient all-reduce among replicas
  kPush,        ///< a worker's gradients to a parameter server
  kPull,        ///< a parameter server's variables to a worker
  kApply,       ///< a parameter server aggregating gradients and updating variables
};
std::string to_string(Phase phase);

struct Task {
  TaskId id = 0;
  std::string name;
  TaskKind kind = TaskKind::kCompute;
  Phase phase = Phase::kForward;
  int64_t step = 0;
  std::string op;  ///< originating op name ("" for synthetic tasks)
  std::vector<TaskId> deps;

  // compute: runs on `device`, in plan order among the device's ready compute tasks
  DeviceId device = 0;
  OpKind op_kind = OpKind::kOther;
  /// Whether the task reads its deps' output buffers (see output_bytes). False for tasks that only
  /// wait for them: gradient reductions, pushes and updates read the gradients and weights held in
  /// static memory, a slot's closing marker reads nothing; their deps' buffers are not kept for
  /// them. (Declared here, in the padding after op_kind: plans hold millions of tasks.)
  bool reads_dep_outputs = true;
  double flops = 0;
  double memory_bytes = 0;  ///< bytes read + written by the kernel (roofline memory term)
  /// The op's kernel shape when it has one (sim/graph/kernel_shape.h), the passes this task runs
  /// of it and the fraction of the op's samples it runs them on (1 / micro-batches).
  std::shared_ptr<const KernelShape> kernel;
  uint8_t kernel_passes = 0;
  double kernel_samples = 1.0;

  // transfer: moves `bytes` from `source` to `device` along the cluster's route
  DeviceId source = 0;
  double bytes = 0;

  // collective: a `collective` of `bytes` over every device of `group`, with `algorithm`; the
  // engine expands it into point-to-point transfers (sim/plan/collective_schedule.h). `bytes` is
  // nccl-tests' size: each device's buffer for an all-reduce, the whole gathered tensor for an
  // all-gather (each device contributes bytes / N), the whole tensor each device reduces for a
  // reduce-scatter (each device keeps bytes / N of the sum). All-gathers and reduce-scatters
  // are rings (collective_supported).
  std::vector<DeviceId> group;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  CollectiveKind collective = CollectiveKind::kAllReduce;

  /// Transfers and collectives: index in ExecutionPlan::transports of the framework's transport
  /// that moves it (its stream cap, wire efficiency and, for collectives, share of the GPUs'
  /// compute); -1: the links only.
  int transport = -1;
  /// Compute: seconds added to the task's cost (a transport's per-message CPU time).
  double fixed_seconds = 0;

  int64_t replica = -1;        ///< data-parallel replica (worker) the task belongs to, -1 = none
  double compute_scale = 1.0;  ///< multiplies a compute task's time (per-step jitter, stragglers)

  /// Bytes allocated on `device` when the task starts (its output), freed when every successor
  /// that reads it (`deps`-reverse, reads_dep_outputs) and every task in `keep_until` has finished.
  double output_bytes = 0;
  std::vector<TaskId> keep_until;
};

/// Memory a device holds for the whole run, by purpose.
struct StaticMemory {
  double parameter_bytes = 0;
  double gradient_bytes = 0;
  double optimizer_state_bytes = 0;
  double total() const { return parameter_bytes + gradient_bytes + optimizer_state_bytes; }
};

/// Each task's successors (the reverse of deps), stored flat; successors[id] is a range of the
/// ids of the tasks that depend on `id`, in increasing order.
class SuccessorLists {
 public:
  struct Range {
    const TaskId* first = nullptr;
    const TaskId* last = nullptr;
    const TaskId* begin() const { return first; }
    const TaskId* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
    bool empty() const { return first == last; }
  };
  explicit SuccessorLists(const std::vector<Task>& tasks);
  SuccessorLists() = default;
  Range operator[](TaskId id) const { return {flat_.data() + offsets_[id], flat_.data() + offsets_[id + 1]}; }
  size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }

 private:
  std::vector<size_t> offsets_;  ///< successors of id: flat_[offsets_[id], offsets_[id + 1])
  std::vector<TaskId> flat_;
};

struct ExecutionPlan {
  /// 2: all-gather and reduce-scatter tasks carry nccl-tests' size and run as themselves; in
  /// version 1 they were all-reduce tasks of half that size (read_plan_json converts).
  static constexpr int kSchemaVersion = 2;
  std::string name;
  int64_t steps = 1;
  int64_t samples_per_step = 1;
  Precision precision = Precision::kFp32;
  /// The framework's activation layout: NCHW makes tensor-core convolutions pay layout transposes.
  MemoryFormat memory_format = MemoryFormat::kNchw;
  /// How the SimGrid engine expands ring and hierarchical all-reduces (the real backend always
  /// runs every round).
  CollectiveFidelity collective_fidelity = CollectiveFidelity::kPerPhase;
  std::vector<Task> tasks;                  ///< tasks[i].id == i
  std::vector<StaticMemory> static_memory;  ///< indexed by DeviceId
  /// Transports its transfers and collectives name (Task::transport), from the strategy's framework.
  std::vector<Transport> transports;
  /// Which devices the plan simulates for the others (inactive: all of them).
  PlanSymmetry symmetry;
  /// Predictions only: GEMM and convolution kernels on GPUs with a measured spread of speeds take
  /// this much longer, the expected slowest of the GPUs the step keeps in lockstep
  /// (sim/cluster/device_spread.h); 1 = none. The real backends ignore it: their GPUs are what
  /// they are.
  double lockstep_gemm_factor = 1.0;
  int64_t lockstep_gpus = 1;  ///< how many GPUs with a spread that factor is the expected slowest of

  /// Successor lists (reverse of deps), computed on demand.
  SuccessorLists successors() const { return SuccessorLists(tasks); }
};

}  // namespace placesim
