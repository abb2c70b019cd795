#include "sim/convergence/convergence_chart.h"

#include <algorithm>
#include <cmath>

#include "sim/convergence/convergence_report.h"
#include "sim/core/units_format.h"
#include "sim/report/chart/chart_axis.h"
#include "sim/report/chart/chart_legend.h"
#include "sim/report/chart/series_style.h"
#include "sim/report/chart/svg_text.h"
#include "sim/report/html_escape.h"

namespace placesim {
namespace {

constexpr double kPanelWidth = 640, kPanelGap = 20;  // SVG user units; two panels fill 1300
constexpr double kPlotHeight = 320;
constexpr double kTop = 30, kLeft = 74, kRight = 16, kAxisBelow = 52;  // around the plot
constexpr double kFont = 12, kTickFont = 11;
constexpr size_t kMaxPointsPerLine = 800;  // keeps the page small for long runs


/// A legend label with the run's time to target (or that it was not reached in the chart).
std::string legend_label(const ConvergenceRun& run) {
  if (!run.replay.target) return run.label() + " (target not reached)";
  return run.label() + " (target at " + format_seconds(run.replay.target->seconds) + ")";
}

struct Panel {
  std::string title;
  std::vector<const ConvergenceRun*> runs;
  std::vector<SeriesStyle> styles;  ///< one per run, unique across both panels
};

struct Axes {
  ChartAxis seconds;
  ChartAxis loss;
  double x(double s, double offset) const { return offset + kLeft + seconds.fraction(s) * (kPanelWidth - kLeft - kRight); }
  double y(double l) const { return kTop + (1 - loss.fraction(l)) * kPlotHeight; }
};

std::string line(double x1, double y1, double x2, double y2, const std::string& attributes) {
  return "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" + svg_number(x2) + "\" y2=\"" +
         svg_number(y2) + "\" " + attributes + "/>";
}

ChartLegend panel_legend(const Panel& panel, double target_loss) {
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < panel.runs.size(); ++i) {
    entries.push_back({legend_label(*panel.runs[i]), panel.styles[i], LegendSymbol::kMarkerAndLine, panel.runs[i]->label()});
  }
  entries.push_back({"target loss " + format_number(target_loss, "%g") + " (dashed)", {"#555555", MarkerShape::kCircle},
                     LegendSymbol::kLine, "target"});
  return ChartLegend(entries, kPanelWidth - kLeft - kRight, kFont);
}

std::string render_panel(const Panel& panel, const Axes& axes, double offset, double target_loss) {
  const double x0 = axes.x(axes.seconds.low(), offset), x1 = axes.x(axes.seconds.high(), offset);
  const double y0 = kTop, y1 = kTop + kPlotHeight;
  std::string svg = svg_text(x0, 18, panel.title, TextStyle(13).bolded()) + "\n";
  svg += "<rect class=\"plot-area\" x=\"" + svg_number(x0) + "\" y=\"" + svg_number(y0) + "\" width=\"" + svg_number(x1 - x0) +
         "\" height=\"" + svg_number(kPlotHeight) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double t : axes.seconds.ticks()) {
    const double x = axes.x(t, offset);
    svg += line(x, y0, x, y1, "stroke=\"#e5e5e5\"") + line(x, y1, x, y1 + 5, "stroke=\"#999\"") +
           svg_text(x, y1 + 18, axes.seconds.label(t), TextStyle(kTickFont, "middle").classed("tick")) + "\n";
  }
  for (double t : axes.loss.ticks()) {
    const double y = axes.y(t);
    svg += line(x0, y, x1, y, "stroke=\"#e5e5e5\"") + line(x0 - 5, y, x0, y, "stroke=\"#999\"") +
           svg_text(x0 - 8, y + 4, axes.loss.label(t), TextStyle(kTickFont, "end").classed("tick")) + "\n";
  }
  svg += svg_text((x0 + x1) / 2, y1 + 40, "simulated seconds", TextStyle(kFont, "middle")) + "\n";
  svg += svg_text(offset + 18, (y0 + y1) / 2, "held-out loss", TextStyle(kFont, "middle").rotated(-90)) + "\n";
  svg += line(x0, axes.y(target_loss), x1, axes.y(target_loss),
              "class=\"target-line\" data-series=\"target\" stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"6,4\"") + "\n";
  for (size_t i = 0; i < panel.runs.size(); ++i) {
    const ConvergenceRun& run = *panel.runs[i];
    const auto& curve = run.replay.curve;
    const std::string& color = panel.styles[i].color;
    const size_t stride = std::max<size_t>(1, curve.size() / kMaxPointsPerLine);
    std::string points;
    for (size_t p = 0; p < curve.size() && curve[p].seconds <= axes.seconds.high(); p += stride) {
      points += svg_number(axes.x(curve[p].seconds, offset)) + "," + svg_number(axes.y(curve[p].loss)) + " ";
    }
    if (curve.back().seconds <= axes.seconds.high()) {
      points += svg_number(axes.x(curve.back().seconds, offset)) + "," + svg_number(axes.y(curve.back().loss));
    }
    svg += "<polyline class=\"series-line\" data-series=\"" + html_escape(run.label()) +
           "\" fill=\"none\" stroke-width=\"1.5\" stroke=\"" + color + "\" points=\"" + points + "\"><title>" +
           html_escape(run.label()) + "</title></polyline>\n";
  }
  // Time-to-target markers over every curve, a dotted drop line to the time axis under each.
  for (size_t i = 0; i < panel.runs.size(); ++i) {
    const ConvergenceRun& run = *panel.runs[i];
    if (!run.replay.target || run.replay.target->seconds > axes.seconds.high()) continue;
    const double x = axes.x(run.replay.target->seconds, offset), y = axes.y(run.replay.target->loss);
    svg += line(x, y, x, y1, "stroke=\"" + panel.styles[i].color + "\" stroke-dasharray=\"2,3\"") + "\n";
    svg += "<path class=\"point target-marker\" data-series=\"" + html_escape(run.label()) + "\" d=\"" +
           marker_path(panel.styles[i].marker, x, y, 11) + "\" fill=\"#fff\" stroke=\"" + panel.styles[i].color +
           "\" stroke-width=\"2\"><title>" +
           html_escape(run.label() + ": loss " + format_number(run.replay.target->loss, "%.4f") + " at " +
                       format_seconds(run.replay.target->seconds)) +
           "</title></path>\n";
  }
  svg += panel_legend(panel, target_loss).render(x0, y1 + kAxisBelow);
  return svg;
}

/// Time axis: up to three times the slowest time to target when every run reached it (the runs
/// continue to max_gradients, which for sync can be far longer), else the longest run.
double shown_seconds(const ConvergenceStudy& study) {
  double longest = 0, slowest_target = 0;
  bool all_reached = !study.runs.empty();
  for (const auto& run : study.runs) {
    longest = std::max(longest, run.replay.curve.back().seconds);
    if (run.replay.target) slowest_target = std::max(slowest_target, run.replay.target->seconds);
    else all_reached = false;
  }
  if (all_reached && slowest_target > 0) longest = std::min(longest, 3 * slowest_target);
  return longest > 0 ? longest : 1;
}

std::string html_table(const std::vector<std::vector<std::string>>& table) {
  std::string html = "<table class=\"runs\">\n";
  for (size_t r = 0; r < table.size(); ++r) {
    html += "<tr>";
    for (size_t c = 0; c < table[r].size(); ++c) {
      const char* tag = r == 0 ? "th" : "td";
      html += std::string("<") + tag + (c < 2 ? " class=\"l\"" : "") + ">" + html_escape(table[r][c]) + "</" + tag + ">";
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string convergence_html(const std::string& scenario_name, const ConvergenceStudy& study) {
  const double target_loss = study.options.target_loss;
  Panel sync{"synchronous", {}, {}}, async{"asynchronous", {}, {}};
  size_t index = 0;
  for (const auto& run : study.runs) {
    Panel& panel = run.asynchronous ? async : sync;
    panel.runs.push_back(&run);
    panel.styles.push_back(series_style(index++));
  }
  const ChartAxis seconds(0, shown_seconds(study), AxisScale::kLinear);
  double min_loss = target_loss, max_loss = target_loss;
  for (const auto& run : study.runs) {
    for (const auto& point : run.replay.curve) {
      if (point.seconds > seconds.high()) break;
      min_loss = std::min(min_loss, point.loss), max_loss = std::max(max_loss, point.loss);
    }
  }
  const Axes axes{seconds, ChartAxis(min_loss, max_loss, AxisScale::kLinear, false)};
  const double legend_height =
      std::max(panel_legend(sync, target_loss).height(), panel_legend(async, target_loss).height());
  const double width = 2 * kPanelWidth + kPanelGap, height = kTop + kPlotHeight + kAxisBelow + legend_height + 8;

  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Convergence: " + html_escape(scenario_name) +
      "</title>\n<style>body{font-family:sans-serif;max-width:1320px;margin:2em auto;padding:0 1em;color:#222}"
      "svg{display:block;margin:1em 0;max-width:100%;height:auto}"
      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
      "td.l,th.l{text-align:left}.verdict{background:#eef4fb;border-left:4px solid #4e79a7;padding:0.5em 1em}"
      "</style></head><body>\n<h1>Time to accuracy: " + html_escape(scenario_name) + "</h1>\n"
      "<p>Held-out loss against simulated time; the dashed line is the target loss " + format_number(target_loss, "%.4g") +
      " and a marker on each curve is where it first reaches it. Each run replays the simulated update order of its\n"
      "strategy on the generated problem; the time axis ends at three times the slowest time to target\n"
      "(convergence.csv has every run in full).</p>\n"
      "<svg id=\"loss-curves\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_number(width) + "\" height=\"" +
      svg_number(height) + "\" viewBox=\"0 0 " + svg_number(width) + " " + svg_number(height) +
      "\" font-family=\"sans-serif\" role=\"img\">\n<title>Held-out loss against simulated seconds</title>\n";
  html += render_panel(sync, axes, 0, target_loss);
  html += render_panel(async, axes, kPanelWidth + kPanelGap, target_loss);
  html += "</svg>\n<h2>Verdict</h2>\n<ul class=\"verdict\" id=\"verdict\">\n";
  for (const auto& verdict : convergence_verdict(study)) html += "<li>" + html_escape(verdict) + "</li>\n";
  html += "</ul>\n<p>Time to target = reference samples / (samples/s x statistical efficiency).</p>\n<h2>Runs</h2>\n<p>" +
          html_escape(problem_description(study)) + "</p>\n" + html_table(convergence_table(study));
  html += "<p>update every: simulated time per parameter update (a sync step, or one async gradient); staleness: mean "
          "updates applied between a gradient's read and its own update; samples/s: samples aggregated into the "
          "parameters per simulated second up to the target; stat. eff.: samples the sequential reference needs / "
          "samples this run needs; updates, gradients (dropped ones included): when the target was reached; final loss "
          "and accuracy: on the held-out samples after the whole run.</p>\n";
  for (const auto& note : study.notes) html += "<p class=\"note\">note: " + html_escape(note) + "</p>\n";
  return html + "</body></html>\n";
}

}  // namespace placesim
