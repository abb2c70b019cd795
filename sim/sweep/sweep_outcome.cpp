#include "sim/sweep/sweep_outcome.h"

#include <cmath>
#include <limits>

namespace placesim {

std::optional<double> SweepOutcome::analytical_error_percent() const {
  if (!analytical || !simulated || analytical->status == RowStatus::kNotApplicable ||
      simulated->status == RowStatus::kNotApplicable || simulated->step_seconds <= 0) {
    return std::nullopt;
  }
  return (analytical->step_seconds - simulated->step_seconds) / simulated->step_seconds * 100.0;
}

std::optional<double> SweepOutcome::search_error_percent() const {
  if (!searched || !analytical || searched->status != RowStatus::kOk || analytical->status != RowStatus::kOk ||
      analytical->step_seconds <= 0) {
    return std::nullopt;
  }
  return (searched->step_seconds - analytical->step_seconds) / analytical->step_seconds * 100.0;
}

SweepOutcome assess_configuration(const SweepSpec& spec, const std::map<std::pair<size_t, Tier>, SweepRow>& rows,
                                  const SweepConfiguration& configuration) {
  SweepOutcome outcome;
  outcome.configuration = configuration;
  if (auto it = rows.find({configuration.index, Tier::kAnalytical}); it != rows.end()) outcome.analytical = it->second;
  if (auto it = rows.find({configuration.index, Tier::kSimulated}); it != rows.end()) outcome.simulated = it->second;
  if (auto it = rows.find({configuration.index, Tier::kSearch}); it != rows.end()) outcome.searched = it->second;
  const NodeType& type = spec.node_types[configuration.node_type];
  outcome.usd_per_hour =
      spec.prices.usd_per_hour(type.device_id, type.template_id, configuration.devices(), configuration.nodes).value_or(0);
  if (outcome.fits() && outcome.row().samples_per_second > 0) {
    const SweepRow& row = outcome.row();
    outcome.time_to_train_seconds = spec.train_samples / row.samples_per_second;
    outcome.usd_to_train = outcome.usd_per_hour * outcome.time_to_train_seconds / 3600.0;
    outcome.tokens_per_second = row.samples_per_second * spec.tokens_per_sample;
    if (row.peak_flops_per_second > 0) {
      outcome.mfu = row.samples_per_second * row.model_flops_per_sample / row.peak_flops_per_second;
      outcome.hfu = row.samples_per_second * row.hardware_flops_per_sample / row.peak_flops_per_second;
    }
    outcome.model_flops_per_second_per_device =
        row.samples_per_second * row.model_flops_per_sample / static_cast<double>(configuration.devices());
    if (row.single_replica_samples_per_second > 0) {
      const double replicas = static_cast<double>(row.replicas > 0 ? row.replicas : configuration.devices());
      outcome.scaling_efficiency = row.samples_per_second / (replicas * row.single_replica_samples_per_second);
    }
    if (spec.target) {
      const SweepTarget& target = *spec.target;
      if (target.metric == "samples_per_second") outcome.meets_target = row.samples_per_second >= target.value;
      if (target.metric == "tokens_per_second") outcome.meets_target = outcome.tokens_per_second >= target.value;
      if (target.metric == "time_to_train_seconds") outcome.meets_target = outcome.time_to_train_seconds <= target.value;
    }
    if (spec.budget_usd_per_hour) outcome.within_budget = outcome.usd_per_hour <= *spec.budget_usd_per_hour;
    if (spec.budget_usd_to_train) {
      outcome.within_budget = outcome.within_budget && outcome.usd_to_train <= *spec.budget_usd_to_train;
    }
  } else {
    outcome.time_to_train_seconds = std::numeric_limits<double>::infinity();
    outcome.usd_to_train = std::numeric_limits<double>::infinity();
    outcome.meets_target = false;
    outcome.within_budget = false;
  }
  return outcome;
}

std::vector<SweepOutcome> assess(const SweepSpec& spec, const std::map<std::pair<size_t, Tier>, SweepRow>& rows) {
  std::vector<SweepOutcome> outcomes;
  outcomes.reserve(spec.configurations.size());
  for (const SweepConfiguration& configuration : spec.configurations) {
    outcomes.push_back(assess_configuration(spec, rows, configuration));
  }
  return outcomes;
}

}  // namespace placesim
