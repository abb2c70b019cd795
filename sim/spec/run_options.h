// RunOptions: how a scenario runs its steps — training or inference, batch, precision, seed,
// optimizer, recomputation and how finely the step is simulated — as the scenario loader reads
// them from the "run" and "simulation" blocks (docs/scenario-format.md). A spec type: planners,
// engines and reports take it; only the loader builds it from JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/memory_format.h"
#include "sim/core/precision.h"
#include "sim/spec/collective_algorithm.h"
#include "sim/spec/tensorflow_version.h"
#include "sim/spec/tier.h"

namespace placesim {

enum class StepKind { kTraining, kInference };

enum class Optimizer { kSgd, kMomentum, kAdam, kLamb };
std::string to_string(Optimizer optimizer);  ///< "sgd", "momentum", "adam", "lamb"
std::optional<Optimizer> parse_optimizer(const std::string& text);
std::vector<std::string> optimizer_names();

struct RunOptions {
  StepKind kind = StepKind::kTraining;
  int64_t steps = 1;
  int64_t batch_size = 1;
  Precision precision = Precision::kFp32;
  /// Activation layout of the framework (NCHW: PyTorch's and tf_cnn_benchmarks' default on GPUs).
  MemoryFormat memory_format = MemoryFormat::kNchw;
  uint64_t seed = 1;
  Optimizer optimizer = Optimizer::kSgd;
  std::vector<std::string> fetch;  ///< ops to evaluate; empty = the whole graph
  double jitter_sigma = 0;  ///< per-step, per-device log-normal slowdown (sigma of the log), seeded
  bool log_device_placement = false;
  /// The TensorFlow 1.x release whose placement log (names, op order) is printed.
  TensorFlowVersion tensorflow_version;
  /// Activation recomputation: forward activations are freed after forward and each op's
  /// forward runs again inside its backward (Chen et al. 2016, "Training Deep Nets with
  /// Sublinear Memory Cost"), trading compute for memory.
  bool recompute = false;
  /// Mixed precision only: the gradients accumulate over the micro-batches and are reduced across
  /// the data-parallel replicas in fp32 (4 bytes each) instead of the 16-bit type: what Megatron-LM
  /// forces for bf16 (`accumulate_allreduce_grads_in_fp32`), Llama 3's training did (Grattafiori et
  /// al. 2024, section 3.3.2, "Numerical stability") and PyTorch FSDP's reduce_dtype=float32 does.
  bool fp32_gradients = false;
  /// From the scenario's "simulation" block: how finely the engine runs all-reduces.
  CollectiveFidelity collective_fidelity = CollectiveFidelity::kPerPhase;
  /// From "simulation": {"symmetry": "representatives"}: 3D-parallel plans simulate one tensor
  /// rank of one data replica per pipeline stage (sim/plan/plan_symmetry.h).
  bool symmetry = false;
  /// From "simulation": {"gpu_spread": ...}: "measured" (true) lets a synchronous step's GEMMs run at
  /// the pace of its slowest GPU, from its profile's measured spread (sim/cluster/device_spread.h);
  /// "none" (false) runs every GPU of a model alike.
  bool gpu_spread = true;
  /// From "simulation": {"tier": ...}: what computes the step (docs/scenario-format.md#simulation).
  Tier tier = Tier::kSimulated;
};

}  // namespace placesim
