#include <algorithm>
#include <cstdint>
#include <map>

#include "sim/core/units_format.h"
#include "sim/report/html_escape.h"
#include "sim/sweep/report/sweep_report.h"
#include "sim/sweep/report/tier_comparison.h"
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

/// The device type as the charts name it: its device, or its template when two types share one.
std::string device_name(const SweepSpec& spec, size_t node_type) {
  const NodeType& type = spec.node_types[node_type];
  for (size_t t = 0; t < spec.node_types.size(); ++t) {
    if (t != node_type && spec.node_types[t].device_id == type.device_id) return type.template_id;
  }
  return type.device_id;
}

/// A series of the per-device-count charts: one strategy on one device type at one batch.
/// Data parallelism varies its global batch with the device count, so its series names the
/// per-replica batch; the others name the global batch.
std::string series_name(const SweepSpec& spec, const SweepConfiguration& c) {
  const StrategyVariant& strategy = spec.strategies[c.strategy];
  return strategy.label + ", " + device_name(spec, c.node_type) + ", " +
         (strategy.kind == "data_parallel" ? "batch " + std::to_string(c.batch_size) + "/replica"
                                           : "global batch " + std::to_string(c.batch_size));
}

/// "#12 16 x V100-SXM2-16GB, ring all-reduce, global batch 1024"
std::string bar_label(const SweepSpec& spec, const SweepOutcome& o) {
  const SweepConfiguration& c = o.configuration;
  return "#" + std::to_string(c.index) + " " + std::to_string(c.devices()) + " x " + device_name(spec, c.node_type) + ", " +
         spec.strategies[c.strategy].label + ", global batch " + std::to_string(global_batch(spec, c)) +
         (o.recommended ? " (recommended)" : "");
}

/// Series drawn apart on the per-device-count charts: those of the best configurations; the
/// others' points are one grey series. A search names each layout a strategy of its own, so it
/// has thousands of series, and a legend entry each had made its charts tens of thousands of
/// pixels tall (the bundled GPT-3 search's 20,748). 15 and the grey one keep the legend (with
/// the recommendation's ring) within the plot's height.
constexpr size_t kSeriesDrawnApart = 15;

/// One series per (strategy, device type, batch), in sweep order, of the configurations that
/// fit and for which `y` is defined (positive). With more than kSeriesDrawnApart + 1 of them,
/// the kSeriesDrawnApart holding the best configurations of `ranking` (best first) keep theirs
/// and the rest are drawn as one grey series underneath, which `note` then names.
std::vector<ChartSeries> per_series(const SweepReport& report, const std::vector<size_t>& ranking,
                                    double (*y)(const SweepOutcome&), std::string* note) {
  const SweepSpec& spec = *report.spec;
  std::vector<ChartSeries> series;
  std::map<std::string, size_t> index_of;
  std::vector<size_t> series_of(report.outcomes.size(), SIZE_MAX);
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.fits() || !(y(o) > 0)) continue;
    const std::string name = series_name(spec, o.configuration);
    auto [it, inserted] = index_of.emplace(name, series.size());
    if (inserted) series.push_back({name, {}, true, false, std::nullopt});
    series_of[o.configuration.index] = it->second;
    series[it->second].points.push_back({static_cast<double>(o.configuration.devices()), y(o), o.configuration.index,
                                         tooltip(spec, o), o.recommended});
  }
  if (series.size() <= kSeriesDrawnApart + 1) return series;
  std::vector<bool> apart(series.size(), false);
  size_t kept = 0;
  for (size_t i = 0; i < ranking.size() && kept < kSeriesDrawnApart; ++i) {
    const size_t s = series_of[ranking[i]];
    if (s != SIZE_MAX && !apart[s]) apart[s] = true, ++kept;
  }
  ChartSeries others{"", {}, false, false, SeriesStyle{"#b8c0c8", MarkerShape::kCircle}};
  std::vector<ChartSeries> drawn;
  size_t merged_series = 0;
  for (size_t s = 0; s < series.size(); ++s) {
    if (apart[s]) {
      drawn.push_back(std::move(series[s]));
      continue;
    }
    ++merged_series;
    for (ChartPoint& point : series[s].points) others.points.push_back(std::move(point));
  }
  others.name = "the other " + std::to_string(merged_series) + " series";
  const size_t merged_points = others.points.size();
  drawn.insert(drawn.begin(), std::move(others));  // first: beneath the series drawn apart
  *note = std::to_string(series.size()) + " series of strategy, device type and batch: the " + std::to_string(kept) +
          " with the best configurations drawn apart, the other " + std::to_string(merged_series) + " (" +
          std::to_string(merged_points) + " configuration" + (merged_points == 1 ? "" : "s") +
          ") in grey; results.csv has every configuration.";
  return drawn;
}

/// What the scaling chart leaves out: configurations that fit but have no scaling efficiency
/// (no one-device baseline: 3D strategies, pipelines), named by strategy.
std::string undefined_scaling_note(const SweepReport& report) {
  std::vector<std::string> strategies;
  size_t count = 0;
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.fits() || o.scaling_efficiency > 0) continue;
    ++count;
    const std::string& label = report.spec->strategies[o.configuration.strategy].label;
    if (std::find(strategies.begin(), strategies.end(), label) == strategies.end()) strategies.push_back(label);
  }
  if (count == 0) return "";
  // A search's strategies are its layouts, thousands of them, each named by its options: the
  // note is one line under the chart, so it names them while that stays short, else counts them.
  constexpr size_t kNamedCharacters = 120;
  std::string names;
  for (const auto& name : strategies) names += (names.empty() ? "" : ", ") + name;
  if (names.size() > kNamedCharacters) names = std::to_string(strategies.size()) + " strategies";
  return "Not shown: " + std::to_string(count) + " configuration" + (count == 1 ? "" : "s") + " (" + names +
         ") without a one-device baseline, for which scaling efficiency is not defined.";
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
      "</title>\n<style>\nbody{font-family:sans-serif;max-width:1320px;margin:2em auto;padding:0 1em;color:#222}\n"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
      "td.l,th.l{text-align:left}.recommendation{background:#fdecea;border-left:4px solid #d62728;padding:0.8em}\n"
      "svg{display:block;margin:1em 0;max-width:100%;height:auto}\n</style>\n</head>\n<body>\n<h1>Capacity plan: " +
      html_escape(report.scenario) + "</h1>\n";
  size_t fitting = 0;
  for (const auto& o : report.outcomes) fitting += o.fits() ? 1 : 0;
  html += "<p>" + std::to_string(report.outcomes.size()) + " configurations, fidelity " + fidelity_name(spec) + "; " +
          std::to_string(fitting) + " fit in memory. Time and cost to train refer to " +
          format_number(spec.train_samples) + " samples.</p>\n";
  html += section("Recommendation", "<p class=\"recommendation\" id=\"recommendation\" data-config=\"" +
                                        (report.recommendation.index ? std::to_string(*report.recommendation.index) : "") +
                                        "\">" + html_escape(report.recommendation.reason) + ".</p>\n");

  const std::vector<size_t> ranking = rank_configurations(report.outcomes);
  ScatterChart throughput{"throughput", "Throughput vs device count, per strategy, device type and batch", "devices",
                          "samples/s", AxisScale::kLog2, AxisScale::kLinear, {}, "", true};
  throughput.series =
      per_series(report, ranking, [](const SweepOutcome& o) { return o.row().samples_per_second; }, &throughput.note);
  ScatterChart efficiency{"scaling", "Scaling efficiency vs device count, per strategy, device type and batch", "devices",
                          "throughput / (devices x one device)", AxisScale::kLog2, AxisScale::kLinear, {}, "", true};
  std::string grouped;
  efficiency.series = per_series(report, ranking, [](const SweepOutcome& o) { return o.scaling_efficiency; }, &grouped);
  efficiency.note = undefined_scaling_note(report);
  if (!grouped.empty()) efficiency.note = grouped + (efficiency.note.empty() ? "" : " " + efficiency.note);
  ScatterChart pareto{"pareto", "Cost to train vs time to train (Pareto frontier in red)", "time to train (hours)",
                      "cost to train (US$)", AxisScale::kLog10, AxisScale::kLog10, {}, "", false};
  ChartSeries others{"other configurations", {}, false, false, SeriesStyle{"#8a96a3", MarkerShape::kCircle}};
  ChartSeries frontier{"Pareto frontier", {}, false, true, SeriesStyle{"#d62728", MarkerShape::kDiamond}};
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.fits() || o.row().samples_per_second <= 0) continue;
    ChartPoint point{o.time_to_train_seconds / 3600.0, o.usd_to_train, o.configuration.index, tooltip(spec, o), o.recommended};
    (o.pareto ? frontier : others).points.push_back(point);
  }
  for (ChartSeries* series : {&others, &frontier}) {
    if (!series->points.empty()) pareto.series.push_back(*series);
  }
  html += section("Throughput", render_scatter(throughput));
  html += section("Scaling efficiency", render_scatter(efficiency));
  html += section("Cost vs time to train", render_scatter(pareto));

  StackedBarChart breakdown{"breakdown", "Where each step's time goes (best configurations first)", "seconds per step",
                            {"compute", "exposed communication", "bubble", "straggler wait", "other"}, {}};
  std::vector<size_t> shown(ranking.begin(), ranking.begin() + static_cast<long>(std::min(kBreakdownBars, ranking.size())));
  if (report.recommendation.index && std::find(shown.begin(), shown.end(), *report.recommendation.index) == shown.end()) {
    shown.push_back(*report.recommendation.index);
  }
  for (size_t i : shown) {
    const SweepOutcome& o = report.outcomes[i];
    const SweepRow& r = o.row();
    breakdown.bars.push_back({bar_label(spec, o),
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
  size_t listed = 0, unlisted = 0;
  for (const SweepOutcome& o : report.outcomes) {
    if (!o.evaluated() || o.fits()) continue;
    if (++listed > kInfeasibleRowsListed) {  // a search's thousands are in results.csv
      ++unlisted;
      continue;
    }
    infeasible += "<tr class=\"infeasible\" data-config=\"" + std::to_string(o.configuration.index) + "\"><td>" +
                  std::to_string(o.configuration.index) + "</td><td class=\"l\">" +
                  html_escape(describe(spec, o.configuration)) + "</td><td class=\"l\">" +
                  (o.row().status == RowStatus::kOutOfMemory ? "out of memory: " : "not applicable: ") +
                  html_escape(o.row().reason) + "</td></tr>\n";
  }
  html += section("Configurations that do not fit or cannot be built",
                  infeasible.empty() ? "<p>None.</p>\n"
                                     : "<table>\n<tr><th>#</th><th class=\"l\">configuration</th><th class=\"l\">why</th></tr>\n" +
                                           infeasible + "</table>\n" +
                                           (unlisted > 0 ? "<p>... and " + std::to_string(unlisted) +
                                                               " more (results.csv has every configuration's reason).</p>\n"
                                                         : std::string()));
  for (const TierComparison& comparison : tier_comparisons(report.outcomes)) {
    std::string rows;
    for (const TierComparison::Row& row : comparison.rows) {
      const SweepOutcome& o = *row.outcome;
      rows += "<tr><td>" + std::to_string(o.configuration.index) + "</td><td class=\"l\">" +
              html_escape(describe(spec, o.configuration)) + "</td><td>" + format_seconds(row.first_seconds) +
              "</td><td>" + format_seconds(row.second_seconds) + "</td><td>" + (row.difference_percent >= 0 ? "+" : "") +
              format_number(row.difference_percent) + "%</td></tr>\n";
    }
    html += section(comparison.title, "<table>\n<tr><th>#</th><th class=\"l\">configuration</th><th>" + comparison.first +
                                          "</th><th>" + comparison.second + "</th><th>difference</th></tr>\n" + rows +
                                          "</table>\n");
  }
  return html + "</body>\n</html>\n";
}

}  // namespace placesim
