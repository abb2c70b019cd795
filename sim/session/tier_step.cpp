#include "sim/session/tier_step.h"

#include "sim/report/memory_verdict.h"

namespace placesim {

TierStep evaluate_on_tier(const Scenario& scenario, const Strategy& strategy, bool with_baseline) {
  TierStep step;
  const Cluster& cluster = scenario.cluster_for(strategy);
  auto consider = [&](const std::string& where, double peak, double capacity) {
    if (capacity <= 0 || peak / capacity <= step.fullest_share()) return;
    step.fullest = where;
    step.fullest_peak_bytes = peak;
    step.fullest_capacity_bytes = capacity;
  };
  if (scenario.run.tier == Tier::kClosedForm) {
    const ClosedFormStepEstimate& estimate = step.closed_form.emplace(estimate_closed_form(scenario, strategy));
    step.step_seconds = estimate.step_seconds;
    step.samples_per_second =
        static_cast<double>(scenario.run.batch_size * strategy.parallelism->data) / estimate.step_seconds;
    step.tasks = estimate.cell_plan_tasks;
    step.out_of_memory = out_of_memory_verdicts(estimate, cluster, *strategy.parallelism);
    for (size_t s = 0; s < estimate.stage_peak_memory.size(); ++s) {
      consider("stage " + std::to_string(s), estimate.stage_peak_memory[s].total(), estimate.stage_memory_capacity_bytes[s]);
    }
    return step;
  }
  const EvaluatedStrategy& evaluated = step.planned.emplace(evaluate_strategy(scenario, strategy, with_baseline));
  step.step_seconds = evaluated.result.step_time_seconds();
  step.samples_per_second = evaluated.result.samples_per_second();
  step.tasks = evaluated.planned.plan.tasks.size();
  step.out_of_memory = out_of_memory_verdicts(evaluated.run.metrics, cluster);
  for (const DeviceMetrics& device : evaluated.run.metrics.devices) {
    consider(cluster.device(device.device).name.local(), device.peak_memory_bytes, device.memory_capacity_bytes);
  }
  return step;
}

}  // namespace placesim
