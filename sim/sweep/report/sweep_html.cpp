#include <algorithm>
#include <map>

#include "sim/core/units_format.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/sweep/report/svg_chart.h"
#include "sim/sweep/sweep_format.h"

namespace placesim {
namespace {

constexpr size_t kBreakdownBars = 25;

std::string tooltip(const SweepSpec& spec, const SweepOutcome& o) {
  return "#" + std::to_string(o.configuration.index) + " " + describe(spec, o.configuration) + ": " +
         format_number(o.row().samples_per_second) + " samples/s, " + format_usd(o.usd_to_train) + " in " +
         format_duration(o.time_to_train_seconds);
}

/// One series per strategy label, in sweep order, of the configurations that fit.
std::vector<ChartSeries> per_strategy(const SweepReport& report, double (*y)(const SweepOutcome&)) {
  const SweepSpec& spec = *report.spec;
  std::vector<ChartSeries> series(spec.strategies.size());
  for (size_t s = 0; s < spec.strategies.size(); ++s) {
    series[s].name = spec.strategies[s].label;
    series[s].line = true;
  }
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.fits()) continue;
    series[o.configuration.strategy].points.push_back({static_cast<double>(o.configuration.devices()), y(o),
                                                       o.configuration.index, tooltip(spec, o), o.recommended});
  }
  series.erase(std::remove_if(series.begin(), series.end(), [](const ChartSeries& s) { return s.points.empty(); }),
               series.end());
  return series;
}

std::string section(const std::string& title, const std::string& body) {
  return "<section>\n<h2>" + html_escape(title) + "</h2>\n" + body + "</section>\n";
}

}  // namespace

std::string sweep_html(const SweepReport& report) {
  const SweepSpec& spec = *report.spec;
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Capacity plan: " +
      html_escape(report.scenario) +
      "</title>\n<style>\nbody{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}\n"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
      "td.l,th.l{text-align:left}.recommendation{background:#fdecea;border-left:4px solid #d62728;padding:0.8em}\n"
      "svg{display:block;margin:1em 0}\n</style>\n</head>\n<body>\n<h1>Capacity plan: " +
      html_escape(report.scenario) + "</h1>\n";
  size_t fitting = 0;
  for (const auto& o : report.outcomes) fitting += o.fits() ? 1 : 0;
  html += "<p>" + std::to_string(report.outcomes.size()) + " configurations, fidelity " + fidelity_name(spec) + "; " +
          std::to_string(fitting) + " fit in memory. Time and cost to train refer to " +
          format_number(spec.train_samples) + " samples.</p>\n";
  html += section("Recommendation", "<p class=\"recommendation\" id=\"recommendation\" data-config=\"" +
                                        (report.recommendation.index ? std::to_string(*report.recommendation.index) : "") +
                                        "\">" + html_escape(report.recommendation.reason) + ".</p>\n");

  ScatterChart throughput{"throughput", "Throughput vs device count, per strategy", "devices", "samples/s", true, false,
                          per_strategy(report, [](const SweepOutcome& o) { return o.row().samples_per_second; })};
  ScatterChart efficiency{"scaling", "Scaling efficiency vs device count, per strategy", "devices",
                          "throughput / (devices x one device)", true, false,
                          per_strategy(report, [](const SweepOutcome& o) { return o.scaling_efficiency; })};
  ScatterChart pareto{"pareto", "Cost to train vs time to train (Pareto frontier in red)", "time to train (hours)",
                      "cost to train (US$)", true, true, {}};
  ChartSeries others{"other configurations", {}, false, false, "#9aa6b2"};
  ChartSeries frontier{"Pareto frontier", {}, false, true, "#d62728"};
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.fits() || o.row().samples_per_second <= 0) continue;
    ChartPoint point{o.time_to_train_seconds / 3600.0, o.usd_to_train, o.configuration.index, tooltip(spec, o), o.recommended};
    (o.pareto ? frontier : others).points.push_back(point);
  }
  pareto.series = {others, frontier};
  html += section("Throughput", render_scatter(throughput));
  html += section("Scaling efficiency", render_scatter(efficiency));
  html += section("Cost vs time to train", render_scatter(pareto));

  StackedBarChart breakdown{"breakdown", "Where each step's time goes (best configurations first)", "seconds per step",
                            {"compute", "exposed communication", "bubble", "straggler wait", "other"}, {}};
  std::vector<size_t> ranking = rank_configurations(report.outcomes);
  std::vector<size_t> shown(ranking.begin(), ranking.begin() + static_cast<long>(std::min(kBreakdownBars, ranking.size())));
  if (report.recommendation.index && std::find(shown.begin(), shown.end(), *report.recommendation.index) == shown.end()) {
    shown.push_back(*report.recommendation.index);
  }
  for (size_t i : shown) {
    const SweepOutcome& o = report.outcomes[i];
    const SweepRow& r = o.row();
    breakdown.bars.push_back({"#" + std::to_string(i) + " " + std::to_string(o.configuration.devices()) + " x " +
                                  spec.node_types[o.configuration.node_type].device_id + ", " +
                                  spec.strategies[o.configuration.strategy].label,
                              i,
                              {{"compute", r.compute_seconds},
                               {"exposed communication", r.exposed_communication_seconds},
                               {"bubble", r.bubble_seconds},
                               {"straggler wait", r.straggler_seconds},
                               {"other", r.other_seconds}},
                              o.recommended});
  }
  html += section("Step time breakdown", render_stacked_bars(breakdown));

  std::string infeasible;
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.evaluated() || o.fits()) continue;
    infeasible += "<tr class=\"infeasible\" data-config=\"" + std::to_string(o.configuration.index) + "\"><td>" +
                  std::to_string(o.configuration.index) + "</td><td class=\"l\">" +
                  html_escape(describe(spec, o.configuration)) + "</td><td class=\"l\">" +
                  (o.row().status == RowStatus::kOutOfMemory ? "out of memory: " : "not applicable: ") +
                  html_escape(o.row().reason) + "</td></tr>\n";
  }
  html += section("Configurations that do not fit or cannot be built",
                  infeasible.empty() ? "<p>None.</p>\n"
                                     : "<table>\n<tr><th>#</th><th class=\"l\">configuration</th><th class=\"l\">why</th></tr>\n" +
                                           infeasible + "</table>\n");
  std::string differences;
  for (const SweepOutcome& o : report.outcomes) {
    auto error = o.analytical_error_percent();
    if (!error) continue;
    differences += "<tr><td>" + std::to_string(o.configuration.index) + "</td><td class=\"l\">" +
                   html_escape(describe(spec, o.configuration)) + "</td><td>" +
                   format_seconds(o.analytical->step_seconds) + "</td><td>" + format_seconds(o.simulated->step_seconds) +
                   "</td><td>" + (*error >= 0 ? "+" : "") + format_number(*error) + "%</td></tr>\n";
  }
  if (!differences.empty()) {
    html += section("Analytical tier vs simulation",
                    "<table>\n<tr><th>#</th><th class=\"l\">configuration</th><th>analytical step</th><th>simulated "
                    "step</th><th>difference</th></tr>\n" +
                        differences + "</table>\n");
  }
  return html + "</body>\n</html>\n";
}

}  // namespace placesim
