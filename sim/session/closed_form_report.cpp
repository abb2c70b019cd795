#include "sim/session/closed_form_report.h"

#include "sim/report/memory_verdict.h"

namespace placesim {

Json closed_form_strategy_json(const Strategy& strategy, const Cluster& cluster, const ClosedFormStepEstimate& estimate,
                               double samples_per_step, const TrainingEfficiency* efficiency) {
  const ParallelismOptions& p = *strategy.parallelism;
  Json stages = Json::array();
  for (size_t s = 0; s < estimate.forward_slot_seconds.size(); ++s) {
    const MemoryBreakdown& memory = estimate.stage_peak_memory[s];
    stages.push_back({{"stage", s},
                      {"device", cluster.device(p.device(0, static_cast<int64_t>(s), 0)).name.canonical()},
                      {"forward_slot_seconds", estimate.forward_slot_seconds[s]},
                      {"backward_slot_seconds", estimate.backward_slot_seconds[s]},
                      {"end_seconds", estimate.stage_end_seconds[s]},
                      {"micro_batches_in_flight", estimate.stage_micro_batches_in_flight[s]},
                      {"peak_memory_bytes", memory.total()},
                      {"peak_memory", memory_breakdown_json(memory)},
                      {"memory_capacity_bytes", estimate.stage_memory_capacity_bytes[s]},
                      {"out_of_memory", memory.total() > estimate.stage_memory_capacity_bytes[s]}});
  }
  Json entry = {{"strategy", strategy.name},
                {"step_time_seconds", estimate.step_seconds},
                {"samples_per_step", samples_per_step},
                {"samples_per_second", samples_per_step / estimate.step_seconds},
                {"cell_plan_tasks", estimate.cell_plan_tasks},
                {"lockstep_gemm_factor", estimate.lockstep_gemm_factor},
                {"lockstep_gpus", estimate.lockstep_gpus},
                {"virtual_stages", p.virtual_stages},
                {"stages", stages}};
  if (efficiency) entry["efficiency"] = efficiency_json(*efficiency);
  return entry;
}

Json closed_form_report(const std::string& scenario_name, const Json& strategies) {
  return {{"kind", "placesim-closed-form-report"},
          {"scenario", scenario_name},
          {"tier", "closed-form"},
          {"strategies", strategies}};
}

}  // namespace placesim
