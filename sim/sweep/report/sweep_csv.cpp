#include <cmath>
#include <cstdio>
#include <string>

#include "sim/core/csv_fields.h"
#include "sim/sweep/report/sweep_report.h"

namespace placesim {
namespace {

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

}  // namespace

int64_t global_batch(const SweepSpec& spec, const SweepConfiguration& configuration) {
  return spec.strategies[configuration.strategy].kind != "data_parallel" ? configuration.batch_size
                                                                    : configuration.batch_size * configuration.devices();
}

std::string sweep_csv(const SweepReport& report) {
  const SweepSpec& spec = *report.spec;
  std::string csv =
      "index,node,device,devices_per_node,nodes,devices,fabric,strategy,strategy_kind,batch_size,global_batch,precision,"
      "tier,status,reason,step_seconds,samples_per_second,tokens_per_second,single_replica_samples_per_second,"
      "scaling_efficiency,compute_seconds,exposed_communication_seconds,bubble_seconds,straggler_seconds,other_seconds,"
      "peak_memory_bytes,memory_capacity_bytes,usd_per_hour,time_to_train_seconds,usd_to_train,meets_target,"
      "within_budget,pareto,recommended,analytical_step_seconds,simulated_step_seconds,analytical_error_percent,tasks,"
      "mfu,hfu,model_tflops_per_second_per_device,tokens_per_day,search_step_seconds,search_error_percent\n";
  for (const SweepOutcome& o : report.outcomes) {
    const SweepConfiguration& c = o.configuration;
    const NodeType& type = spec.node_types[c.node_type];
    const StrategyVariant& strategy = spec.strategies[c.strategy];
    csv += std::to_string(c.index) + "," + csv_cell(type.template_id) + "," + csv_cell(type.device_id) + "," +
           std::to_string(c.devices_per_node) + "," + std::to_string(c.nodes) + "," + std::to_string(c.devices()) + "," +
           csv_cell(c.fabric) + "," + csv_cell(strategy.label) + "," + strategy.kind + "," + std::to_string(c.batch_size) +
           "," + std::to_string(global_batch(spec, c)) + "," + c.precision + ",";
    if (!o.evaluated()) {
      csv += ",not_evaluated" + std::string(30, ',') + "\n";
      continue;
    }
    const SweepRow& r = o.row();
    bool ok = o.fits();
    auto if_ok = [&](double v) { return ok ? csv_number(v) : std::string(); };
    auto flag = [&](bool v) { return ok ? std::string(v ? "1" : "0") : std::string(); };
    csv += to_string(r.tier) + "," + to_string(r.status) + "," + csv_cell(r.reason) + "," + csv_number(r.step_seconds) + "," +
           csv_number(r.samples_per_second) + "," + (spec.tokens_per_sample > 0 ? if_ok(o.tokens_per_second) : "") + "," +
           // No baseline (search rows, strategies without one): empty, not a measured 0.
           (r.single_replica_samples_per_second > 0 ? csv_number(r.single_replica_samples_per_second) : "") + "," +
           (o.scaling_efficiency > 0 ? if_ok(o.scaling_efficiency) : "") + "," +
           csv_number(r.compute_seconds) + "," + csv_number(r.exposed_communication_seconds) + "," +
           csv_number(r.bubble_seconds) + "," + csv_number(r.straggler_seconds) + "," + csv_number(r.other_seconds) + "," +
           csv_number(r.peak_memory_bytes) + "," + csv_number(r.memory_capacity_bytes) + "," + csv_number(o.usd_per_hour) +
           "," + if_ok(o.time_to_train_seconds) + "," + if_ok(o.usd_to_train) + "," + flag(o.meets_target) + "," +
           flag(o.within_budget) + "," + (o.pareto ? "1" : "0") + "," + (o.recommended ? "1" : "0") + "," +
           (o.analytical ? csv_number(o.analytical->step_seconds) : "") + "," +
           (o.simulated ? csv_number(o.simulated->step_seconds) : "") + "," +
           (o.analytical_error_percent() ? csv_number(*o.analytical_error_percent()) : "") + "," +
           std::to_string(r.tasks) + "," + (r.peak_flops_per_second > 0 ? if_ok(o.mfu) : "") + "," +
           (r.peak_flops_per_second > 0 ? if_ok(o.hfu) : "") + "," +
           (r.model_flops_per_sample > 0 ? if_ok(o.model_flops_per_second_per_device / 1e12) : "") + "," +
           (spec.tokens_per_sample > 0 ? if_ok(o.tokens_per_second * 86400.0) : "") + "," +
           (o.searched ? csv_number(o.searched->step_seconds) : "") + "," +
           (o.search_error_percent() ? csv_number(*o.search_error_percent()) : "") + "\n";
  }
  return csv;
}

}  // namespace placesim
