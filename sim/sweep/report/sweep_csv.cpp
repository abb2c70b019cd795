#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/csv_fields.h"
#include "sim/sweep/report/sweep_report.h"

namespace placesim {
namespace {

/// `v` as printf's "%.9g" writes it (std::to_chars with a precision is specified as that
/// conversion), without formatting through a stream; nothing when not finite.
void append_csv_number(double v, std::string* csv) {
  if (!std::isfinite(v)) return;
  std::array<char, 40> buffer;
  csv->append(buffer.data(), std::to_chars(buffer.data(), buffer.data() + buffer.size(), v, std::chars_format::general, 9).ptr);
}

void append_csv_integer(int64_t v, std::string* csv) {
  std::array<char, 24> buffer;
  csv->append(buffer.data(), std::to_chars(buffer.data(), buffer.data() + buffer.size(), v).ptr);
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
  // Room for rows of up to 512 bytes (a not-applicable row's reason is the longest part): a
  // million rows' text then grows in place instead of through copies of doubling buffers, and
  // what is reserved and not written is never touched.
  csv.reserve(csv.size() + 512 * report.outcomes.size());
  // Each cell is appended followed by a comma, the row's last comma then turned into its end:
  // a million-configuration sweep writes its rows without a temporary string per cell.
  auto text = [&csv](std::string_view value) { csv.append(value).push_back(','); };
  auto integer = [&csv](int64_t value) {
    append_csv_integer(value, &csv);
    csv.push_back(',');
  };
  auto number_if = [&csv](bool present, double value) {
    if (present) append_csv_number(value, &csv);
    csv.push_back(',');
  };
  auto number = [&](double value) { number_if(true, value); };
  auto optional_number = [&](std::optional<double> value) { number_if(value.has_value(), value.value_or(0)); };
  for (const SweepOutcome& o : report.outcomes) {
    const SweepConfiguration& c = o.configuration;
    const NodeType& type = spec.node_types[c.node_type];
    const StrategyVariant& strategy = spec.strategies[c.strategy];
    integer(static_cast<int64_t>(c.index));
    text(csv_cell(type.template_id));
    text(csv_cell(type.device_id));
    integer(c.devices_per_node);
    integer(c.nodes);
    integer(c.devices());
    text(csv_cell(c.fabric));
    text(csv_cell(strategy.label));
    text(strategy.kind);
    integer(c.batch_size);
    integer(global_batch(spec, c));
    text(c.precision);
    if (!o.evaluated()) {
      csv += ",not_evaluated" + std::string(30, ',') + "\n";
      continue;
    }
    const SweepRow& r = o.row();
    const bool ok = o.fits();
    auto flag = [&](bool v) { text(ok ? (v ? "1" : "0") : ""); };
    text(to_string(r.tier));
    text(to_string(r.status));
    text(csv_cell(r.reason));
    number(r.step_seconds);
    number(r.samples_per_second);
    number_if(spec.tokens_per_sample > 0 && ok, o.tokens_per_second);
    // No baseline (search rows, strategies without one): empty, not a measured 0.
    number_if(r.single_replica_samples_per_second > 0, r.single_replica_samples_per_second);
    number_if(o.scaling_efficiency > 0 && ok, o.scaling_efficiency);
    number(r.compute_seconds);
    number(r.exposed_communication_seconds);
    number(r.bubble_seconds);
    number(r.straggler_seconds);
    number(r.other_seconds);
    number(r.peak_memory_bytes);
    number(r.memory_capacity_bytes);
    number(o.usd_per_hour);
    number_if(ok, o.time_to_train_seconds);
    number_if(ok, o.usd_to_train);
    flag(o.meets_target);
    flag(o.within_budget);
    text(o.pareto ? "1" : "0");
    text(o.recommended ? "1" : "0");
    optional_number(o.analytical ? std::optional(o.analytical->step_seconds) : std::nullopt);
    optional_number(o.simulated ? std::optional(o.simulated->step_seconds) : std::nullopt);
    optional_number(o.analytical_error_percent());
    integer(static_cast<int64_t>(r.tasks));
    number_if(r.peak_flops_per_second > 0 && ok, o.mfu);
    number_if(r.peak_flops_per_second > 0 && ok, o.hfu);
    number_if(r.model_flops_per_sample > 0 && ok, o.model_flops_per_second_per_device / 1e12);
    number_if(spec.tokens_per_sample > 0 && ok, o.tokens_per_second * 86400.0);
    optional_number(o.searched ? std::optional(o.searched->step_seconds) : std::nullopt);
    optional_number(o.search_error_percent());
    csv.back() = '\n';
  }
  return csv;
}

}  // namespace placesim
