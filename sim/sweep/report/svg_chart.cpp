#include "sim/sweep/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace placesim {
namespace {

const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr const char* kHighlight = "#d62728";
constexpr double kWidth = 720, kHeight = 380, kLeft = 80, kRight = 170, kTop = 36, kBottom = 52;

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", v);
  return buffer;
}

std::string tick_text(double v) {
  char buffer[32];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) std::snprintf(buffer, sizeof buffer, "%.0e", v);
  else std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;

  Axis(double min_value, double max_value, bool logarithmic) : log(logarithmic) {
    if (log) {
      min_value = std::max(min_value, 1e-300);
      lo = std::pow(10, std::floor(std::log10(min_value)));
      hi = std::pow(10, std::ceil(std::log10(std::max(max_value, min_value))));
      if (hi <= lo) hi = lo * 10;
      for (double decade = lo; decade <= hi * 1.0001; decade *= 10) {
        for (double m : {1.0, 2.0, 5.0}) {
          if (decade * m <= hi * 1.0001 && (hi / lo <= 1000 || m == 1.0)) ticks.push_back(decade * m);
        }
      }
      return;
    }
    lo = std::min(0.0, min_value);
    hi = max_value > lo ? max_value : lo + 1;
    double raw = (hi - lo) / 5;
    double magnitude = std::pow(10, std::floor(std::log10(raw)));
    double step = magnitude * (raw / magnitude <= 1 ? 1 : raw / magnitude <= 2 ? 2 : raw / magnitude <= 5 ? 5 : 10);
    hi = std::ceil(hi / step) * step;
    for (double t = lo; t <= hi + step / 2; t += step) ticks.push_back(t);
  }

  /// Position in [0, 1].
  double fraction(double v) const {
    if (log) return (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }
};

std::string frame(const std::string& id, const std::string& title) {
  return "<svg id=\"" + html_escape(id) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + number(kWidth) + " " +
         number(kHeight) + "\" width=\"" + number(kWidth) + "\" height=\"" + number(kHeight) + "\" role=\"img\">\n<title>" +
         html_escape(title) + "</title>\n<text x=\"" + number(kWidth / 2) +
         "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" + html_escape(title) + "</text>\n";
}

}  // namespace

std::string render_scatter(const ScatterChart& chart) {
  double x_min = std::numeric_limits<double>::infinity(), x_max = -x_min, y_min = x_min, y_max = -x_min;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) {
      x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, p.y), y_max = std::max(y_max, p.y);
    }
  }
  std::string svg = frame(chart.id, chart.title);
  if (!std::isfinite(x_min)) return svg + "<text x=\"40\" y=\"80\">no data</text>\n</svg>\n";
  Axis x(x_min, x_max, chart.log_x), y(y_min, y_max, chart.log_y);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + x.fraction(v) * plot_w; };
  auto py = [&](double v) { return kTop + (1 - y.fraction(v)) * plot_h; };
  svg += "<rect x=\"" + number(kLeft) + "\" y=\"" + number(kTop) + "\" width=\"" + number(plot_w) + "\" height=\"" +
         number(plot_h) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double t : x.ticks) {
    svg += "<line x1=\"" + number(px(t)) + "\" x2=\"" + number(px(t)) + "\" y1=\"" + number(kTop) + "\" y2=\"" +
           number(kTop + plot_h) + "\" stroke=\"#eee\"/><text x=\"" + number(px(t)) + "\" y=\"" +
           number(kTop + plot_h + 16) + "\" text-anchor=\"middle\" font-size=\"11\">" + tick_text(t) + "</text>\n";
  }
  for (double t : y.ticks) {
    svg += "<line x1=\"" + number(kLeft) + "\" x2=\"" + number(kLeft + plot_w) + "\" y1=\"" + number(py(t)) + "\" y2=\"" +
           number(py(t)) + "\" stroke=\"#eee\"/><text x=\"" + number(kLeft - 6) + "\" y=\"" + number(py(t) + 4) +
           "\" text-anchor=\"end\" font-size=\"11\">" + tick_text(t) + "</text>\n";
  }
  svg += "<text x=\"" + number(kLeft + plot_w / 2) + "\" y=\"" + number(kHeight - 10) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + html_escape(chart.x_label) + "</text>\n";
  svg += "<text transform=\"translate(16 " + number(kTop + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" + html_escape(chart.y_label) + "</text>\n";
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    std::string color = series.color.empty() ? kPalette[s % (sizeof kPalette / sizeof kPalette[0])] : series.color;
    if ((series.line || series.step_line) && !series.points.empty()) {
      std::map<double, double> by_x;  // for each x, the best (largest y for lines, smallest for steps)
      for (const auto& p : series.points) {
        auto [it, inserted] = by_x.emplace(p.x, p.y);
        if (!inserted) it->second = series.step_line ? std::min(it->second, p.y) : std::max(it->second, p.y);
      }
      std::string path;
      double previous_y = 0;
      bool first = true;
      for (auto [vx, vy] : by_x) {
        if (!first && series.step_line) path += " " + number(px(vx)) + "," + number(py(previous_y));
        path += (first ? "" : " ") + number(px(vx)) + "," + number(py(vy));
        previous_y = vy;
        first = false;
      }
      svg += "<polyline class=\"series-line\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + path +
             "\"/>\n";
    }
    for (const auto& p : series.points) {
      svg += "<circle class=\"point\" data-config=\"" + std::to_string(p.config) + "\" data-series=\"" +
             html_escape(series.name) + "\" cx=\"" + number(px(p.x)) + "\" cy=\"" + number(py(p.y)) + "\" r=\"" +
             (p.highlight ? "6" : "3.5") + "\" fill=\"" + (p.highlight ? kHighlight : color) +
             "\" fill-opacity=\"0.8\"><title>" + html_escape(p.tooltip) + "</title></circle>\n";
    }
    double legend_y = kTop + 14 + 18 * static_cast<double>(s);
    svg += "<circle cx=\"" + number(kWidth - kRight + 16) + "\" cy=\"" + number(legend_y - 4) + "\" r=\"4\" fill=\"" + color +
           "\"/><text x=\"" + number(kWidth - kRight + 26) + "\" y=\"" + number(legend_y) + "\" font-size=\"11\">" +
           html_escape(series.name) + "</text>\n";
  }
  return svg + "</svg>\n";
}

std::string render_stacked_bars(const StackedBarChart& chart) {
  const double row_h = 18, left = 260, right = 150, top = 40;
  double height = top + row_h * static_cast<double>(chart.bars.size()) + 40;
  double total_max = 0;
  for (const auto& bar : chart.bars) {
    double total = 0;
    for (const auto& s : bar.segments) total += std::max(0.0, s.value);
    total_max = std::max(total_max, total);
  }
  std::string svg = "<svg id=\"" + html_escape(chart.id) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    number(kWidth + 140) + " " + number(height) + "\" width=\"" + number(kWidth + 140) + "\" height=\"" +
                    number(height) + "\" role=\"img\">\n<title>" + html_escape(chart.title) + "</title>\n<text x=\"" +
                    number((kWidth + 140) / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
                    html_escape(chart.title) + "</text>\n";
  if (chart.bars.empty() || total_max <= 0) return svg + "<text x=\"40\" y=\"60\">no data</text>\n</svg>\n";
  const double plot_w = kWidth + 140 - left - right;
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StackedBar& bar = chart.bars[b];
    double y = top + row_h * static_cast<double>(b);
    svg += "<text x=\"" + number(left - 6) + "\" y=\"" + number(y + row_h * 0.7) + "\" text-anchor=\"end\" font-size=\"11\"" +
           (bar.highlight ? " font-weight=\"bold\" fill=\"" + std::string(kHighlight) + "\"" : "") + ">" +
           html_escape(bar.label) + "</text>\n";
    double x = left;
    for (const auto& segment : bar.segments) {
      auto part = std::find(chart.parts.begin(), chart.parts.end(), segment.part) - chart.parts.begin();
      double w = std::max(0.0, segment.value) / total_max * plot_w;
      svg += "<rect class=\"bar\" data-config=\"" + std::to_string(bar.config) + "\" data-part=\"" +
             html_escape(segment.part) + "\" x=\"" + number(x) + "\" y=\"" + number(y + 2) + "\" width=\"" + number(w) +
             "\" height=\"" + number(row_h - 4) + "\" fill=\"" + kPalette[static_cast<size_t>(part) % 9] + "\"><title>" +
             html_escape(bar.label + ": " + segment.part + " " + tick_text(segment.value) + " " + chart.value_label) +
             "</title></rect>\n";
      x += w;
    }
  }
  for (size_t p = 0; p < chart.parts.size(); ++p) {
    double legend_y = top + 14 + 18 * static_cast<double>(p);
    svg += "<rect x=\"" + number(kWidth + 140 - right + 12) + "\" y=\"" + number(legend_y - 10) +
           "\" width=\"10\" height=\"10\" fill=\"" + kPalette[p % 9] + "\"/><text x=\"" +
           number(kWidth + 140 - right + 26) + "\" y=\"" + number(legend_y) + "\" font-size=\"11\">" +
           html_escape(chart.parts[p]) + "</text>\n";
  }
  svg += "<text x=\"" + number(left + plot_w / 2) + "\" y=\"" + number(height - 12) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + html_escape(chart.value_label) + "</text>\n";
  return svg + "</svg>\n";
}

}  // namespace placesim
