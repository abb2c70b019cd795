#include "sim/report/cost_provenance.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "sim/core/units_format.h"

namespace placesim {

namespace {

/// Which efficiency an fp8 run's GEMMs borrow on `spec`, or "" when it has an fp8 fit, runs no
/// FP8 GEMMs (no fp8 peak: the host CPUs) or the run is not fp8. The kernel model falls back as
/// KernelModel::gemm_efficiency_for does.
std::string fp8_gemm_efficiency(const DeviceSpec& spec, Precision precision) {
  if (precision != Precision::kFp8 || !spec.has_peak(Precision::kFp8)) return "";
  if (!spec.kernel_model) {
    return "the profile's matmul/conv efficiencies (\"compute_efficiency\", estimated for 16-bit GEMMs)";
  }
  const std::optional<Precision> source = spec.kernel_model->gemm_efficiency_source(Precision::kFp8);
  if (!source || *source == Precision::kFp8) return "";
  return "the kernel model's " + to_string(*source) + " GEMM efficiency (no fp8 fit)";
}

/// The fitted precision that prices `precision`'s GEMMs on a kernel model without a fit of its
/// own ("" when it has one, shares fp16/bf16's, runs no such GEMMs, or is fp8: fp8_gemm_efficiency).
std::string gemm_efficiency_stand_in(const DeviceSpec& spec, Precision precision) {
  if (!spec.kernel_model || precision == Precision::kFp8 || !spec.has_peak(precision)) return "";
  const std::optional<Precision> source = spec.kernel_model->gemm_efficiency_source(precision);
  if (!source || *source == precision) return "";
  const bool sixteen_bit = (precision == Precision::kFp16 || precision == Precision::kBf16) &&
                           (*source == Precision::kFp16 || *source == Precision::kBf16);
  return sixteen_bit ? "" : to_string(*source);
}

}  // namespace

PlanKernels plan_kernels(const ExecutionPlan& plan) {
  PlanKernels kernels;
  bool convolutions = false;
  for (const Task& task : plan.tasks) {
    convolutions = convolutions || (task.kernel && task.kernel->kind == KernelKind::kConv2d);
    kernels.fused_attention = kernels.fused_attention || (task.kernel && task.kernel->kind == KernelKind::kAttention);
    kernels.pooling = kernels.pooling || (task.kind == TaskKind::kCompute && task.op_kind == OpKind::kPooling);
  }
  kernels.nchw_convolutions = convolutions && plan.memory_format == MemoryFormat::kNchw;
  return kernels;
}

PlanKernels graph_kernels(const OpGraph& graph, MemoryFormat format) {
  PlanKernels kernels;
  bool convolutions = false;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    convolutions = convolutions || (op.kernel && op.kernel->kind == KernelKind::kConv2d);
    kernels.fused_attention = kernels.fused_attention || (op.kernel && op.kernel->kind == KernelKind::kAttention);
    kernels.pooling = kernels.pooling || op.kind == OpKind::kPooling;
  }
  kernels.nchw_convolutions = convolutions && format == MemoryFormat::kNchw;
  return kernels;
}

std::vector<CostSource> plan_cost_sources(const Cluster& cluster, const ExecutionPlan& plan) {
  return cost_sources(cluster, plan.precision, plan_kernels(plan));
}

std::vector<CostSource> cost_sources(const Cluster& cluster, Precision precision, PlanKernels kernels) {
  std::vector<CostSource> sources;
  std::set<std::string> seen;
  for (const auto& device : cluster.devices()) {
    const DeviceSpec& spec = device.spec;
    if (!seen.insert(spec.id).second) continue;
    CostSource source;
    source.profile = spec.id;
    if (spec.kernel_model) {
      const KernelModelFit& fit = spec.kernel_model->fit;
      source.kind = fit.scaled_from.empty() ? "kernel model" : "kernel model of " + fit.scaled_from;
      source.table = fit.table;
      source.date = fit.date;
      source.held_out_median_error = fit.held_out_median_error;
      source.held_out_p90_error = fit.held_out_p90_error;
      source.held_out_rows = fit.held_out_rows;
      for (const BoardGemmRefit& refit : fit.board_gemm) {
        if (std::find(refit.precisions.begin(), refit.precisions.end(), precision) != refit.precisions.end()) {
          source.board_gemm = refit;
        }
      }
      source.fused_attention = kernels.fused_attention;
      if (kernels.fused_attention) source.attention = spec.kernel_model->attention;
      source.input_power_fraction = spec.kernel_model->input_power_fraction(precision);
      source.sustained_fraction = spec.sustained_fraction_for(precision);
      source.matmul_ceiling_flops_per_second = spec.step_matmul_ceiling_for(precision);
      source.sustained_ceiling = source.matmul_ceiling_flops_per_second > 0 &&
                                 source.matmul_ceiling_flops_per_second != spec.matmul_ceiling_for(precision);
      source.pooling = kernels.pooling;
      source.pooling_reads_per_second_per_sm = spec.kernel_model->pooling_reads_per_second_per_sm;
      source.pooling_source = spec.kernel_model->pooling_source;
    } else {
      source.kind = "roofline";
    }
    source.fp8_gemm_efficiency = fp8_gemm_efficiency(spec, precision);
    source.gemm_efficiency_stand_in = gemm_efficiency_stand_in(spec, precision);
    source.precision = precision;
    source.layout_transposes = kernels.nchw_convolutions && spec.runs_convolutions_on_tensor_cores(precision);
    source.step_validation = spec.step_validation;
    sources.push_back(std::move(source));
  }
  return sources;
}

std::string describe(const CostSource& source) {
  std::string text;
  if (source.kind == "roofline") {
    text = source.profile + ": datasheet roofline with estimated efficiencies (no measured kernel table)";
  } else {
    text = source.profile + ": " + source.kind + " (" + source.table + (source.date.empty() ? "" : ", " + source.date) +
           "): held-out kernels " + format_percent(source.held_out_median_error) + " median, " +
           format_percent(source.held_out_p90_error) + " p90 error over " + std::to_string(source.held_out_rows) + " rows";
  }
  if (const auto& refit = source.board_gemm) {
    text += "; " + to_string(source.precision) + " GEMMs: efficiency refitted on " + refit->device +
            "'s own GEMM rows (" + refit->table + "): held-out " +
            format_percent(refit->held_out_median_error) + " median over " + std::to_string(refit->held_out_rows) +
            " rows";
  }
  if (source.fused_attention) {
    if (const auto& a = source.attention) {
      text += "; fused attention: " + a->implementation + " fitted on " + a->table + ": " +
              format_percent(a->median_error) + " median, " + format_percent(a->p90_error) + " p90 error over " +
              std::to_string(a->rows) + " rows";
    } else {
      text += "; fused attention: as fast as its GEMMs, an estimate (no attention kernels measured)";
    }
  }
  if (!source.fp8_gemm_efficiency.empty()) {
    text += "; fp8 GEMMs: the datasheet's dense FP8 peak x " + source.fp8_gemm_efficiency +
            ", an estimate (no FP8 kernels measured), each linear layer's with Transformer Engine's casts of its "
            "input and output gradient (docs/cost-model.md, FP8 casts)";
  }
  if (!source.gemm_efficiency_stand_in.empty()) {
    text += "; " + to_string(source.precision) + " GEMMs: the datasheet's " + to_string(source.precision) +
            " peak x the kernel model's " + source.gemm_efficiency_stand_in + " GEMM efficiency, an estimate (no " +
            to_string(source.precision) + " kernels measured)";
  }
  if (source.input_power_fraction < 1) {
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "; %s kernels at %.3g of the fitted compute rate", to_string(source.precision).c_str(),
                  source.input_power_fraction);
    text += buffer + std::string(" (the fit's rows ran on inputs that draw less power than training data; kernel_model.input_power)");
  }
  if (source.sustained_fraction < 1) {
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "; %s tensor-core kernels at %.3g of a burst's rate", to_string(source.precision).c_str(),
                  source.sustained_fraction);
    text += buffer + std::string(" (the board at its power limit through a step, where its kernel tables were timed in bursts; "
                                 "sustained_matmul)");
  }
  if (source.matmul_ceiling_flops_per_second > 0) {
    char buffer[192];
    std::snprintf(buffer, sizeof(buffer), "; %s GEMMs at most %.1f TFLOP/s (%s)", to_string(source.precision).c_str(),
                  source.matmul_ceiling_flops_per_second / 1e12,
                  source.sustained_ceiling ? "the fastest matmul measured on it under sustained load; sustained_matmul"
                                           : "the fastest matmul measured on it; max_achievable_matmul");
    text += buffer;
  }
  if (source.layout_transposes) {
    text += "; its tensor-core convolutions pay cuDNN's NCHW <-> NHWC transposes (run.memory_format \"nchw\"; "
            "\"nhwc\" has none)";
  }
  if (source.pooling && source.pooling_reads_per_second_per_sm > 0) {
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "; pooling: %.3g window reads/s per SM, ", source.pooling_reads_per_second_per_sm);
    text += buffer + source.pooling_source;
  } else if (source.pooling) {
    text += "; pooling: as elementwise kernels, an estimate (no pooling kernel measured)";
  }
  if (const auto& v = source.step_validation) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "; published steps %.1f%% MAPE over %lld case%s (%s)", v->mape_percent,
                  static_cast<long long>(v->cases), v->cases == 1 ? "" : "s", v->date.c_str());
    return text + buffer;
  }
  return text + "; no published step time on this profile";
}

std::string cost_sources_text(const std::vector<CostSource>& sources) {
  std::string out = "Compute costs (docs/cost-model.md; step-level validation: docs/validation.md):\n";
  for (const CostSource& source : sources) out += "  " + describe(source) + "\n";
  return out;
}

Json cost_sources_json(const std::vector<CostSource>& sources) {
  Json list = Json::array();
  for (const auto& s : sources) {
    Json entry = {{"profile", s.profile}, {"kind", s.kind}};
    if (!s.fp8_gemm_efficiency.empty()) entry["fp8_gemm_efficiency"] = s.fp8_gemm_efficiency;
    if (s.layout_transposes) entry["layout_transposes"] = true;
    if (s.pooling) {
      entry["pooling"] = s.pooling_reads_per_second_per_sm > 0
                             ? Json{{"reads_per_second_per_sm", s.pooling_reads_per_second_per_sm}, {"source", s.pooling_source}}
                             : Json("as elementwise kernels: no pooling kernel measured");
    }
    if (s.input_power_fraction < 1) entry["input_power_fraction"] = s.input_power_fraction;
    if (s.sustained_fraction < 1) entry["sustained_fraction"] = s.sustained_fraction;
    if (s.matmul_ceiling_flops_per_second > 0) entry["matmul_ceiling_flops_per_second"] = s.matmul_ceiling_flops_per_second;
    if (s.fused_attention) {
      entry["fused_attention"] = s.attention ? Json{{"implementation", s.attention->implementation},
                                                    {"table", s.attention->table},
                                                    {"rows", s.attention->rows},
                                                    {"median_error", s.attention->median_error},
                                                    {"p90_error", s.attention->p90_error}}
                                             : Json("unfitted: as fast as its GEMMs");
    }
    if (!s.gemm_efficiency_stand_in.empty()) {
      entry["gemm_efficiency_stand_in"] = {{"precision", to_string(s.precision)}, {"fitted_precision", s.gemm_efficiency_stand_in}};
    }
    if (s.kind != "roofline") {
      entry["table"] = s.table;
      entry["date"] = s.date;
      entry["held_out_rows"] = s.held_out_rows;
      entry["held_out_median_error"] = s.held_out_median_error;
      entry["held_out_p90_error"] = s.held_out_p90_error;
    }
    if (s.board_gemm) {
      entry["board_gemm"] = {{"device", s.board_gemm->device},
                             {"table", s.board_gemm->table},
                             {"held_out_rows", s.board_gemm->held_out_rows},
                             {"held_out_median_error", s.board_gemm->held_out_median_error},
                             {"held_out_p90_error", s.board_gemm->held_out_p90_error}};
    }
    if (s.step_validation) {
      entry["step_validation"] = {{"cases", s.step_validation->cases},
                                  {"mape_percent", s.step_validation->mape_percent},
                                  {"date", s.step_validation->date}};
    }
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace placesim
