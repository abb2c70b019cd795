// DeviceSpec: what one device model can do (peak FLOP/s per precision, memory, bandwidth,
// launch overhead, roofline efficiencies), as read from hardware_profiles/devices/*.json.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/device_name.h"
#include "sim/cluster/device_spread.h"
#include "sim/cluster/kernel_model.h"
#include "sim/core/precision.h"
#include "sim/graph/op.h"

namespace placesim {

/// How the step times placesim predicts on a device profile compared with published ones: the
/// profile's rows of the open validation set (`placesim validate scenarios/validation/`), their
/// mean absolute percentage error and when it was measured. Kept current by a test that
/// re-validates the set (tests/data/step_validation_test.cpp).
struct StepValidation {
  int64_t cases = 0;
  double mape_percent = 0;
  std::string date;  ///< "YYYY-MM-DD"
};

/// The fastest a matrix multiply has been measured to run on this device, per precision: a
/// brute-force search over shapes with random inputs after a warm-up (e.g. the Maximum Achievable
/// Matmul FLOPS of stas00/ml-engineering). No step kernel's math runs faster (gemm_model.cpp): a
/// kernel fit's tile efficiency, extrapolated past the table's largest shapes, may say it does.
struct MatmulCeiling {
  std::map<Precision, double> flops_per_second;  ///< per precision, at most the peak
  std::string source;                            ///< the measurement
};

/// The matmul rate a device holds under a training step's load beside a short burst's, measured
/// by one method on one board: under sustained load the board draws its power limit and its
/// clock settles below the boost clock a burst runs at (e.g. the Maximum Sustainable and
/// Achievable Matmul FLOPS of stas00/ml-engineering). Kernel tables are timed in bursts, so a
/// step's tensor-core kernels run at sustained / burst of their fitted rate, and no faster than
/// the sustained rate.
struct SustainedMatmul {
  std::map<Precision, double> sustained_flops_per_second;  ///< per precision, positive
  std::map<Precision, double> burst_flops_per_second;      ///< the same precisions, at least the sustained rate
  std::string source;                                      ///< the measurement
};

struct DeviceSpec {
  std::string id;    ///< profile id, e.g. "v100-sxm2-16gb"
  std::string name;  ///< marketing name, e.g. "Tesla V100-SXM2-16GB"
  DeviceKind kind = DeviceKind::kCpu;
  std::map<Precision, double> peak_flops_per_second;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double kernel_launch_overhead_seconds = 0;
  std::map<OpKind, double> compute_efficiency;  ///< fraction of peak reached per op kind
  double default_compute_efficiency = 0.5;
  double memory_efficiency = 0.8;               ///< fraction of peak memory bandwidth reached
  /// The same for normalisations and reductions (is_reduction_kind), which make extra passes over
  /// the bytes the model counts; 0 = memory_efficiency.
  double reduction_memory_efficiency = 0;
  /// The bandwidth fraction a memory-bound kernel of `op_kind` reaches.
  double memory_efficiency_for(OpKind op_kind) const {
    return is_reduction_kind(op_kind) && reduction_memory_efficiency > 0 ? reduction_memory_efficiency : memory_efficiency;
  }
  /// The bandwidth fraction a step's memory-bound kernel of `op_kind` reaches: its kernel model's
  /// fitted fraction where the device has one, else the profile's.
  double step_memory_efficiency_for(OpKind op_kind) const {
    return kernel_model ? kernel_model->memory_efficiency_for(op_kind) : memory_efficiency_for(op_kind);
  }
  std::string compute_capability;               ///< GPUs only, "" otherwise
  int64_t sm_count = 0;                         ///< GPUs: streaming multiprocessors (datasheet); 0 = not given
  std::string pci_bus_id;                       ///< GPUs only, for the TensorFlow device mapping
  /// Peak for a precision; falls back to the nearest supported one (bf16<->fp16, tf32->fp32).
  /// fp8 has no such fallback but fp32: a scenario refuses fp8 on a device without an fp8 peak
  /// (sim/cluster/precision_support.h).
  double peak_for(Precision precision) const;
  /// Whether the profile lists a peak for exactly this precision.
  bool has_peak(Precision precision) const;
  /// Whether cuDNN runs convolutions of `precision` on tensor cores here: a GPU of compute
  /// capability 7.0 or later (Volta) in fp16 or bf16, 8.0 or later (Ampere) in tf32, 8.9 or later
  /// in fp8.
  bool runs_convolutions_on_tensor_cores(Precision precision) const;
  double efficiency_for(OpKind op_kind) const;
  /// Optional calibrated GEMM efficiency by task size: (FLOPs, fraction of peak) points with
  /// increasing FLOPs. When present, matmul and conv tasks use it instead of compute_efficiency.
  std::vector<std::pair<double, double>> gemm_efficiency_by_flops;
  /// The efficiency of a task of this kind and size: the GEMM curve, interpolated linearly in
  /// log(FLOPs) and held constant beyond its ends, for matmul/conv when the profile has one;
  /// efficiency_for(op_kind) otherwise.
  double efficiency_for(OpKind op_kind, double flops) const;
  /// Fitted kernel-level cost model (GEMM tiles and waves, convolution algorithms); null: the
  /// roofline above prices every task.
  std::shared_ptr<const KernelModel> kernel_model;
  /// Set: a measured ceiling on the rate of this device's matrix-multiply kernels. The measured
  /// blocks are shared, not copied, with the spec (a cluster holds a spec per device).
  std::shared_ptr<const MatmulCeiling> max_achievable_matmul;
  /// Set: how much GPUs of this model differ in GEMM speed (device_spread.h); a synchronous job
  /// runs its GEMMs at its slowest GPU's pace. None: every device of the model alike.
  std::shared_ptr<const GemmTimeSpread> gemm_time_spread;
  /// The ceiling for `precision` in FLOP/s; 0 when the profile has none for it.
  double matmul_ceiling_for(Precision precision) const;
  /// Set: the matmul rate this device keeps under sustained load, against a burst's.
  std::shared_ptr<const SustainedMatmul> sustained_matmul;
  /// The fraction of a burst's kernel rate a step's kernels of `precision` keep under sustained
  /// load (sustained / burst); 1 when the profile has no measurement for it.
  double sustained_fraction_for(Precision precision) const;
  /// The most FLOP/s a step's matmul of `precision` reaches: the lower of the measured ceiling
  /// (matmul_ceiling_for) and the sustained rate; 0 when the profile has neither.
  double step_matmul_ceiling_for(Precision precision) const;
  /// Step-level error on the published cases that use this profile; none: no such case.
  std::optional<StepValidation> step_validation;
};

}  // namespace placesim
