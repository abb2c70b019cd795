#include "sim/convergence/convergence_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/convergence/convergence_report.h"
#include "sim/report/html_escape.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

constexpr double kPanelWidth = 460, kPanelHeight = 300;   // SVG user units
constexpr double kLeft = 56, kTop = 28, kBottom = 40;     // axis margins
constexpr size_t kMaxPointsPerLine = 800;                 // keeps the page small for long runs
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

struct Axes {
  double max_seconds = 1;
  double min_loss = 0, max_loss = 1;
  double x(double seconds, double offset) const {
    return offset + kLeft + (kPanelWidth - kLeft - 12) * seconds / max_seconds;
  }
  double y(double loss) const {
    const double clamped = std::clamp(loss, min_loss, max_loss);
    return kTop + (kPanelHeight - kTop - kBottom) * (max_loss - clamped) / (max_loss - min_loss);
  }
};

std::string panel(const std::string& title, const std::vector<const ConvergenceRun*>& runs, const Axes& axes,
                  double offset, double target_loss) {
  std::string svg = "<text x=\"" + format_number(offset + kLeft, "%.4g") + "\" y=\"16\" font-weight=\"bold\">" + html_escape(title) + "</text>\n";
  const double x0 = axes.x(0, offset), x1 = axes.x(axes.max_seconds, offset);
  const double y0 = axes.y(axes.max_loss), y1 = axes.y(axes.min_loss);
  svg += "<rect x=\"" + format_number(x0, "%.4g") + "\" y=\"" + format_number(y0, "%.4g") + "\" width=\"" + format_number(x1 - x0, "%.4g") + "\" height=\"" +
         format_number(y1 - y0, "%.4g") + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double seconds = axes.max_seconds * tick / 4, loss = axes.min_loss + (axes.max_loss - axes.min_loss) * tick / 4;
    svg += "<text x=\"" + format_number(axes.x(seconds, offset), "%.4g") + "\" y=\"" + format_number(y1 + 16, "%.4g") +
           "\" text-anchor=\"middle\" font-size=\"11\">" + format_number(seconds, "%.3g") + "</text>\n";
    svg += "<text x=\"" + format_number(x0 - 4, "%.4g") + "\" y=\"" + format_number(axes.y(loss) + 4, "%.4g") +
           "\" text-anchor=\"end\" font-size=\"11\">" + format_number(loss, "%.3g") + "</text>\n";
  }
  svg += "<text x=\"" + format_number((x0 + x1) / 2, "%.4g") + "\" y=\"" + format_number(y1 + 32, "%.4g") +
         "\" text-anchor=\"middle\" font-size=\"12\">simulated seconds</text>\n";
  svg += "<line x1=\"" + format_number(x0, "%.4g") + "\" x2=\"" + format_number(x1, "%.4g") + "\" y1=\"" + format_number(axes.y(target_loss), "%.4g") + "\" y2=\"" +
         format_number(axes.y(target_loss), "%.4g") + "\" stroke=\"#555\" stroke-dasharray=\"5,4\"/>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& curve = runs[i]->replay.curve;
    const size_t stride = std::max<size_t>(1, curve.size() / kMaxPointsPerLine);
    std::string points;
    for (size_t p = 0; p < curve.size() && curve[p].seconds <= axes.max_seconds; p += stride) {
      points += format_number(axes.x(curve[p].seconds, offset), "%.1f") + "," + format_number(axes.y(curve[p].loss), "%.1f") + " ";
    }
    if (curve.back().seconds <= axes.max_seconds) {
      points += format_number(axes.x(curve.back().seconds, offset), "%.1f") + "," + format_number(axes.y(curve.back().loss), "%.1f");
    }
    const char* color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    svg += "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" + std::string(color) + "\" points=\"" + points +
           "\"><title>" + html_escape(runs[i]->strategy + ", " + runs[i]->variant) + "</title></polyline>\n";
    const double legend_y = y0 + 14 + 14 * static_cast<double>(i);
    svg += "<line x1=\"" + format_number(x1 - 190, "%.4g") + "\" x2=\"" + format_number(x1 - 172, "%.4g") + "\" y1=\"" + format_number(legend_y - 4, "%.4g") +
           "\" y2=\"" + format_number(legend_y - 4, "%.4g") + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>";
    svg += "<text x=\"" + format_number(x1 - 168, "%.4g") + "\" y=\"" + format_number(legend_y, "%.4g") + "\" font-size=\"11\">" +
           html_escape(runs[i]->strategy + ", " + runs[i]->variant) + "</text>\n";
  }
  return svg;
}

}  // namespace

std::string convergence_html(const std::string& scenario_name, const ConvergenceStudy& study) {
  std::vector<const ConvergenceRun*> sync, async;
  Axes axes;
  axes.max_seconds = 0;
  axes.min_loss = study.options.target_loss;
  axes.max_loss = study.options.target_loss;
  for (const auto& run : study.runs) {
    (run.asynchronous ? async : sync).push_back(&run);
    axes.max_seconds = std::max(axes.max_seconds, run.replay.curve.back().seconds);
  }
  // Zoom on the race: three times the slowest time to target, when every run reached it
  // (the runs continue to max_gradients, which for sync can be far longer).
  double slowest_target = 0;
  bool all_reached = !study.runs.empty();
  for (const auto& run : study.runs) {
    if (run.replay.target) slowest_target = std::max(slowest_target, run.replay.target->seconds);
    else all_reached = false;
  }
  if (all_reached && slowest_target > 0) axes.max_seconds = std::min(axes.max_seconds, 3 * slowest_target);
  if (axes.max_seconds <= 0) axes.max_seconds = 1;
  for (const auto& run : study.runs) {
    for (const auto& point : run.replay.curve) {
      if (point.seconds > axes.max_seconds) break;
      axes.min_loss = std::min(axes.min_loss, point.loss);
      axes.max_loss = std::max(axes.max_loss, point.loss);
    }
  }
  if (axes.max_loss - axes.min_loss < 1e-9) axes.max_loss = axes.min_loss + 1;
  const double width = 2 * kPanelWidth + 20;
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Convergence: " + html_escape(scenario_name) +
      "</title>\n<style>body{font-family:sans-serif;margin:20px}pre{font-size:12px}</style></head><body>\n"
      "<h1>Time to accuracy: " + html_escape(scenario_name) + "</h1>\n"
      "<p>Held-out loss against simulated time; the dashed line is the target loss " + format_number(study.options.target_loss, "%.4g") +
      ". Each run replays the simulated update order of its strategy on the generated problem; the\n"
      "time axis ends at three times the slowest time to target (convergence.csv has every run in full).</p>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + format_number(width, "%.4g") + "\" height=\"" + format_number(kPanelHeight, "%.4g") +
      "\" viewBox=\"0 0 " + format_number(width, "%.4g") + " " + format_number(kPanelHeight, "%.4g") + "\" font-family=\"sans-serif\">\n";
  html += panel("synchronous", sync, axes, 0, study.options.target_loss);
  html += panel("asynchronous", async, axes, kPanelWidth + 20, study.options.target_loss);
  html += "</svg>\n<pre>" + html_escape(convergence_text(study)) + "</pre>\n</body></html>\n";
  return html;
}

}  // namespace placesim
