#include "sim/report/cost_provenance.h"

#include <cstdio>
#include <set>

#include "sim/core/units_format.h"

namespace placesim {

std::vector<CostSource> cost_sources(const Cluster& cluster) {
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
    } else {
      source.kind = "roofline";
    }
    source.step_validation = spec.step_validation;
    sources.push_back(std::move(source));
  }
  return sources;
}

std::string describe(const CostSource& source) {
  std::string steps = "; no published step time on this profile";
  if (const auto& v = source.step_validation) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "; published steps %.1f%% MAPE over %lld case%s (%s)", v->mape_percent,
                  static_cast<long long>(v->cases), v->cases == 1 ? "" : "s", v->date.c_str());
    steps = buffer;
  }
  if (source.kind == "roofline") {
    return source.profile + ": datasheet roofline with estimated efficiencies (no measured kernel table)" + steps;
  }
  return source.profile + ": " + source.kind + " (" + source.table + (source.date.empty() ? "" : ", " + source.date) +
         "): held-out kernels " + format_percent(source.held_out_median_error) + " median, " +
         format_percent(source.held_out_p90_error) + " p90 error over " + std::to_string(source.held_out_rows) + " rows" +
         steps;
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
    if (s.kind != "roofline") {
      entry["table"] = s.table;
      entry["date"] = s.date;
      entry["held_out_rows"] = s.held_out_rows;
      entry["held_out_median_error"] = s.held_out_median_error;
      entry["held_out_p90_error"] = s.held_out_p90_error;
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
