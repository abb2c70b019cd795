// Where each device's compute costs come from (a kernel model fitted on a measured table, one
// borrowed from a measured device, or the datasheet roofline) and how well that source predicted
// the kernels it was not fitted on: the line `run` prints per device profile.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.h"
#include "sim/core/json_reader.h"
#include "sim/graph/op_graph.h"
#include "sim/plan/execution_plan.h"

namespace placesim {

struct CostSource {
  std::string profile;  ///< device profile id
  std::string kind;     ///< "kernel model", "kernel model of <id>", "roofline"
  std::string table;    ///< measured table the model was fitted on ("" for the roofline)
  std::string date;
  double held_out_median_error = 0;
  double held_out_p90_error = 0;
  int64_t held_out_rows = 0;
  /// Under fp8, which GEMM efficiency prices its FP8 GEMMs when no fp8 kernels were measured
  /// ("" otherwise): the line says it is an estimate.
  std::string fp8_gemm_efficiency;
  /// Under another precision the kernel model has no fit of its own for (tf32 on a model fitted on
  /// fp32 and fp16, fp16 on one fitted on fp32 only), the fitted precision whose efficiency its
  /// GEMMs take ("" otherwise; fp16 and bf16 standing in for each other is the model's rule, not
  /// listed).
  std::string gemm_efficiency_stand_in;
  Precision precision = Precision::kFp32;  ///< the run's
  /// The run's convolutions run on this device's tensor cores in an NCHW framework, so each pays
  /// cuDNN's layout transposes (sim/cost/layout_transposes.h): the line says so.
  bool layout_transposes = false;

  /// A borrowed model whose efficiency for the run's precision was refitted on a board's own
  /// GEMM rows (calibrate --board-gemm-kernels): the line names the board, the table and its error.
  std::optional<BoardGemmRefit> board_gemm;
  /// The run has fused attention kernels on a device with a kernel model: how they are priced (an
  /// attention fit, or nullopt with `fused_attention` set: as fast as their GEMMs, unfitted).
  std::optional<AttentionKernelFit> attention;
  bool fused_attention = false;

  /// The run's precision's kernels at this fraction of the fitted compute rate, the fit's rows
  /// having run on low-power inputs (KernelModel::input_power); 1 = none.
  double input_power_fraction = 1;
  /// The run's precision's kernels at this fraction of a burst's rate, the board running at its
  /// power limit through a step (DeviceSpec::sustained_matmul); 1 = none measured.
  double sustained_fraction = 1;
  /// The device's measured matmul ceiling at the run's precision under a step's load
  /// (DeviceSpec::step_matmul_ceiling_for), under which the kernel model's GEMMs run; 0 = none.
  double matmul_ceiling_flops_per_second = 0;
  /// Whether that ceiling is the sustained rate (DeviceSpec::sustained_matmul) rather than a
  /// burst's (max_achievable_matmul).
  bool sustained_ceiling = false;

  /// The run has pooling ops on a device with a kernel model: their window-read rate per SM and
  /// where it comes from, or 0 and "": priced as elementwise kernels (no pooling kernel measured).
  bool pooling = false;
  double pooling_reads_per_second_per_sm = 0;
  std::string pooling_source;

  std::optional<StepValidation> step_validation;  ///< the profile's published cases, if any
};

/// The kinds of kernel a run has whose pricing the cost line names.
struct PlanKernels {
  bool nchw_convolutions = false;  ///< convolutions, with the plan keeping NCHW tensors
  bool fused_attention = false;    ///< fused attention (FlashAttention) kernels
  bool pooling = false;            ///< pooling ops
};
/// What `plan`'s tasks have of PlanKernels (one pass over them).
PlanKernels plan_kernels(const ExecutionPlan& plan);
/// What `graph`'s ops have of PlanKernels, their tensors kept in `format`: for a tier that builds
/// no plan of the step (the closed form), the kinds plan_kernels finds in the tasks they become.
PlanKernels graph_kernels(const OpGraph& graph, MemoryFormat format);

/// One entry per distinct profile among the cluster's accelerators and CPUs, in device order,
/// for a run at `precision` with `kernels`.
std::vector<CostSource> cost_sources(const Cluster& cluster, Precision precision = Precision::kFp32,
                                     PlanKernels kernels = {});
/// The entries for running `plan` on `cluster`: at its precision, with its plan_kernels.
std::vector<CostSource> plan_cost_sources(const Cluster& cluster, const ExecutionPlan& plan);
/// "p100-sxm2-16gb: kernel model of p100-pcie-16gb (deepbench_p100-pcie-16gb.csv, 2026-12-01): held-out kernels 15.7% median,
/// 80.2% p90 error over 82 rows[; fp8 GEMMs: ...]; published steps 18.1% MAPE over 20 cases (2026-12-01)"; a profile without
/// published cases says so.
std::string describe(const CostSource& source);
Json cost_sources_json(const std::vector<CostSource>& sources);
/// The block `run` prints: a heading line, then one indented describe() line per source.
std::string cost_sources_text(const std::vector<CostSource>& sources);

}  // namespace placesim
