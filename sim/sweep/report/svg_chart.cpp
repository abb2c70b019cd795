#include "sim/sweep/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "sim/core/units_format.h"
#include "sim/report/chart/chart_legend.h"
#include "sim/report/chart/svg_text.h"
#include "sim/report/html_escape.h"

namespace placesim {
namespace {

constexpr const char* kHighlight = "#d62728";
constexpr double kFont = 12, kTickFont = 11, kTitleFont = 15;
constexpr double kTop = 44, kBottom = 58;  // title above the plot; tick labels and axis label below
constexpr double kPlotHeight = 340;
constexpr double kMarkerSize = 10;

std::string open_svg(const std::string& id, const std::string& title, double width, double height) {
  return "<svg id=\"" + html_escape(id) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + svg_number(width) + " " +
         svg_number(height) + "\" width=\"" + svg_number(width) + "\" height=\"" + svg_number(height) +
         "\" role=\"img\" font-family=\"sans-serif\">\n<title>" + html_escape(title) + "</title>\n" +
         svg_text(width / 2, 22, title, TextStyle(kTitleFont, "middle").bolded()) + "\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& stroke) {
  return "<line x1=\"" + svg_number(x1) + "\" y1=\"" + svg_number(y1) + "\" x2=\"" + svg_number(x2) + "\" y2=\"" +
         svg_number(y2) + "\" stroke=\"" + stroke + "\"/>";
}

/// For each x, the best y of a series: the largest for a line, the smallest for a staircase.
std::map<double, double> best_by_x(const ChartSeries& series) {
  std::map<double, double> by_x;
  for (const auto& p : series.points) {
    auto [it, inserted] = by_x.emplace(p.x, p.y);
    if (!inserted) it->second = series.step_line ? std::min(it->second, p.y) : std::max(it->second, p.y);
  }
  return by_x;
}

double widest_label(const ChartAxis& axis, double font_size) {
  double widest = 0;
  for (double t : axis.ticks()) widest = std::max(widest, text_width(axis.label(t), font_size));
  return widest;
}

/// One marker of a series and the points drawn as it: those whose markers' centres fall in one
/// half-pixel square (configurations with the same value, such as ZeRO stages that leave a
/// step's time as it was, or values closer than the chart can show). `lead` gives the marker
/// its position, configuration and tooltip: the first of them, or the highlighted one.
struct CoincidentPoints {
  const ChartPoint* lead = nullptr;
  std::vector<size_t> others;  ///< the other points' configurations, in series order
};

/// `series`' points grouped by the half-pixel square of their markers' centres (`centre_of`
/// gives it in pixels), in the order each marker is first drawn: one element per visible marker
/// instead of one per configuration, so that a million-configuration sweep's page draws what
/// it shows and stays loadable.
template <typename CentreOf>
std::vector<CoincidentPoints> coincident_points(const ChartSeries& series, CentreOf centre_of) {
  std::vector<CoincidentPoints> markers;
  std::map<std::pair<long long, long long>, size_t> marker_at;
  for (const ChartPoint& p : series.points) {
    const auto [x, y] = centre_of(p);
    auto [it, inserted] = marker_at.emplace(std::make_pair(std::llround(2 * x), std::llround(2 * y)), markers.size());
    if (inserted) {
      markers.push_back({&p, {}});
      continue;
    }
    CoincidentPoints& marker = markers[it->second];
    if (p.highlight && !marker.lead->highlight) {
      marker.others.insert(marker.others.begin(), marker.lead->config);
      marker.lead = &p;
    } else {
      marker.others.push_back(p.config);
    }
  }
  return markers;
}

/// What a merged marker's tooltip adds: the other configurations drawn there (the first ten).
std::string also_here(const std::vector<size_t>& others) {
  if (others.empty()) return "";
  constexpr size_t kNamed = 10;
  std::string text = " (the same here: ";
  for (size_t i = 0; i < std::min(others.size(), kNamed); ++i) text += (i ? ", #" : "#") + std::to_string(others[i]);
  if (others.size() > kNamed) text += " and " + std::to_string(others.size() - kNamed) + " more";
  return text + ")";
}

/// A scatter legend's labels at most this wide (pixels): a search's series are named by every
/// option of their layout, whose full names had left its plots a few pixels wide.
constexpr double kLegendLabelWidth = 0.35 * kChartWidth;

/// `names` as legend labels: those wider than kLegendLabelWidth without the words every one of
/// them shares (the options all the layouts drawn agree on, the device type, the batch), and
/// then still too wide cut short with an ellipsis. The others as they are; a chart's elements
/// keep the full names (data-series, tooltips).
std::vector<std::string> legend_labels(const std::vector<std::string>& names, double font_size) {
  auto words_of = [](const std::string& name) {
    std::vector<std::string> words;
    for (size_t start = 0; start <= name.size();) {
      const size_t end = std::min(name.find(' ', start), name.size());
      if (end > start) words.push_back(name.substr(start, end - start));
      start = end + 1;
    }
    return words;
  };
  std::vector<bool> wide(names.size(), false);
  std::optional<std::set<std::string>> shared;
  for (size_t i = 0; i < names.size(); ++i) {
    if (text_width(names[i], font_size) <= kLegendLabelWidth) continue;
    wide[i] = true;
    const std::vector<std::string> words = words_of(names[i]);
    const std::set<std::string> own(words.begin(), words.end());
    if (!shared) {
      shared = own;
    } else {
      std::set<std::string> both;
      std::set_intersection(shared->begin(), shared->end(), own.begin(), own.end(), std::inserter(both, both.end()));
      shared = std::move(both);
    }
  }
  std::vector<std::string> labels = names;
  const size_t wide_count = static_cast<size_t>(std::count(wide.begin(), wide.end(), true));
  for (size_t i = 0; i < names.size(); ++i) {
    if (!wide[i]) continue;
    std::string label;
    if (wide_count > 1) {
      for (const std::string& word : words_of(names[i])) {
        if (shared->count(word) == 0) label += (label.empty() ? "" : " ") + word;
      }
      while (!label.empty() && label.back() == ',') label.pop_back();
    }
    if (label.empty()) label = names[i];
    if (text_width(label, font_size) > kLegendLabelWidth) {
      while (!label.empty() && text_width(label + "\u2026", font_size) > kLegendLabelWidth) {
        // A whole character at a time: a UTF-8 sequence's continuation bytes, then its lead.
        while (!label.empty() && (static_cast<unsigned char>(label.back()) & 0xC0) == 0x80) label.pop_back();
        if (!label.empty()) label.pop_back();
      }
      label += "\u2026";
    }
    labels[i] = label;
  }
  return labels;
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
  std::vector<SeriesStyle> styles;
  std::vector<LegendEntry> entries;
  std::vector<std::string> names;
  for (const ChartSeries& series : chart.series) names.push_back(series.name);
  const std::vector<std::string> labels = legend_labels(names, kFont);
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    styles.push_back(series.style.value_or(series_style(s)));
    entries.push_back({labels[s], styles.back(),
                       series.line || series.step_line ? LegendSymbol::kMarkerAndLine : LegendSymbol::kMarker, series.name});
  }
  bool any_highlight = false;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) any_highlight = any_highlight || p.highlight;
  }
  if (any_highlight) entries.push_back({"recommended (ringed)", {kHighlight, MarkerShape::kCircle}, LegendSymbol::kMarker, "recommended"});
  const ChartLegend legend(entries, 1, kFont);  // one entry per row, right of the plot

  const bool empty = !std::isfinite(x_min);
  const ChartAxis x(empty ? 0 : x_min, empty ? 1 : x_max, chart.x_scale);
  const ChartAxis y(empty ? 0 : y_min, empty ? 1 : y_max, chart.y_scale);
  const double left = 34 + widest_label(y, kTickFont) + 8;  // rotated axis label, tick labels, gap
  const double right = legend.width() + 40;
  const double plot_w = kChartWidth - left - right;
  const double plot_h = std::max(kPlotHeight, legend.height());
  const double note_h = chart.note.empty() ? 0 : 22;
  const double height = kTop + plot_h + kBottom + note_h;
  std::string svg = open_svg(chart.id, chart.title, kChartWidth, height);
  if (empty) {  // nothing fits, or nothing has the value (the note says why)
    return svg + svg_text(left, kTop + 40, chart.note.empty() ? "no configuration fits" : chart.note, TextStyle(kFont)) +
           "\n</svg>\n";
  }

  // Series s of n at x sits (s - (n - 1) / 2) x spacing pixels off: together the series take
  // at most a quarter of the narrowest gap between ticks, each at most 4 pixels from the next;
  // the x axis is inset by half the spread and a marker so that no point crosses the frame.
  double spacing = 0, inset = 0;
  if (chart.spread_series && chart.series.size() > 1) {
    const double n = static_cast<double>(chart.series.size());
    const double gap = plot_w / std::max<double>(1, static_cast<double>(x.ticks().size()) - 1);  // before the inset
    spacing = std::min(4.0, gap / 4 / n);
    inset = spacing * (n - 1) / 2 + kMarkerSize;
  }
  auto px = [&](double v) { return left + inset + x.fraction(v) * (plot_w - 2 * inset); };
  auto py = [&](double v) { return kTop + (1 - y.fraction(v)) * plot_h; };
  auto series_px = [&](size_t s, double v) {
    return px(v) + (static_cast<double>(s) - static_cast<double>(chart.series.size() - 1) / 2) * spacing;
  };
  svg += "<rect class=\"plot-area\" x=\"" + svg_number(left) + "\" y=\"" + svg_number(kTop) + "\" width=\"" +
         svg_number(plot_w) + "\" height=\"" + svg_number(plot_h) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double t : x.ticks()) {
    svg += line(px(t), kTop, px(t), kTop + plot_h, "#e5e5e5") + line(px(t), kTop + plot_h, px(t), kTop + plot_h + 5, "#999") +
           svg_text(px(t), kTop + plot_h + 18, x.label(t), TextStyle(kTickFont, "middle").classed("tick")) + "\n";
  }
  for (double t : y.ticks()) {
    svg += line(left, py(t), left + plot_w, py(t), "#e5e5e5") + line(left - 5, py(t), left, py(t), "#999") +
           svg_text(left - 8, py(t) + 4, y.label(t), TextStyle(kTickFont, "end").classed("tick")) + "\n";
  }
  svg += svg_text(left + plot_w / 2, kTop + plot_h + 42, chart.x_label, TextStyle(kFont, "middle")) + "\n";
  svg += svg_text(16, kTop + plot_h / 2, chart.y_label, TextStyle(kFont, "middle").rotated(-90)) + "\n";

  // Every line first, then every marker, so no line covers a point; markers are hollow, so a
  // point under another one of a different shape still shows.
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    if (!(series.line || series.step_line) || series.points.size() < 2) continue;
    std::string path;
    double previous_y = 0;
    bool first = true;
    for (auto [vx, vy] : best_by_x(series)) {
      if (!first && series.step_line) path += " " + svg_number(series_px(s, vx)) + "," + svg_number(py(previous_y));
      path += (first ? "" : " ") + svg_number(series_px(s, vx)) + "," + svg_number(py(vy));
      previous_y = vy;
      first = false;
    }
    svg += "<polyline class=\"series-line\" data-series=\"" + html_escape(series.name) + "\" fill=\"none\" stroke=\"" +
           styles[s].color + "\" stroke-width=\"1.5\" stroke-opacity=\"0.75\" points=\"" + path + "\"/>\n";
  }
  for (size_t s = 0; s < chart.series.size(); ++s) {
    const ChartSeries& series = chart.series[s];
    const std::string series_name = html_escape(series.name);
    for (const CoincidentPoints& marker : coincident_points(
             series, [&](const ChartPoint& p) { return std::make_pair(series_px(s, p.x), py(p.y)); })) {
      const ChartPoint& p = *marker.lead;
      if (p.highlight) {
        svg += "<circle class=\"highlight\" data-series=\"recommended\" cx=\"" + svg_number(series_px(s, p.x)) + "\" cy=\"" +
               svg_number(py(p.y)) + "\" r=\"10\" fill=\"none\" stroke=\"" + kHighlight + "\" stroke-width=\"2.5\"/>\n";
      }
      svg += "<path class=\"point\" data-config=\"" + std::to_string(p.config) + "\" data-series=\"" + series_name +
             "\" d=\"" + marker_path(styles[s].marker, series_px(s, p.x), py(p.y), kMarkerSize) + "\" fill=\"none\" stroke=\"" + styles[s].color + "\" stroke-width=\"1.8\"><title>" +
             html_escape(p.tooltip + also_here(marker.others)) + "</title></path>\n";
    }
  }
  svg += legend.render(left + plot_w + 24, kTop);
  if (!chart.note.empty()) svg += svg_text(left, height - 8, chart.note, TextStyle(kFont).colored("#555").classed("note")) + "\n";
  return svg + "</svg>\n";
}

std::string render_stacked_bars(const StackedBarChart& chart) {
  constexpr double kRowHeight = 22, kMargin = 16;
  // The legend lists the parts some bar has (a sweep without pipelines has no bubble).
  std::vector<LegendEntry> entries;
  for (size_t p = 0; p < chart.parts.size(); ++p) {
    bool present = false;
    for (const auto& bar : chart.bars) {
      for (const auto& segment : bar.segments) present = present || (segment.part == chart.parts[p] && segment.value > 0);
    }
    if (present) entries.push_back({chart.parts[p], series_style(p), LegendSymbol::kSwatch, chart.parts[p]});
  }
  const ChartLegend legend(entries, kChartWidth - 2 * kMargin, kFont);
  std::vector<double> totals;
  double label_width = 0;
  for (const auto& bar : chart.bars) {
    double total = 0;
    for (const auto& s : bar.segments) total += std::max(0.0, s.value);
    totals.push_back(total);
    label_width = std::max(label_width, text_width(bar.label, kTickFont) * (bar.highlight ? 1.1 : 1.0));  // bold is wider
  }
  const double total_max = totals.empty() ? 0 : *std::max_element(totals.begin(), totals.end());
  const ChartAxis axis(0, total_max > 0 ? total_max : 1, AxisScale::kLinear);
  const double top = 34 + legend.height() + 10;
  const double left = kMargin + label_width + 10;
  double total_label_width = 0;
  for (double total : totals) total_label_width = std::max(total_label_width, text_width(format_seconds(total), kTickFont));
  const double right = std::max(kMargin + text_width(axis.label(axis.high()), kTickFont) / 2, total_label_width + 14);
  const double plot_w = kChartWidth - left - right;
  const double plot_h = kRowHeight * static_cast<double>(chart.bars.size());
  const double height = top + plot_h + 52;
  std::string svg = open_svg(chart.id, chart.title, kChartWidth, height);
  svg += legend.render(kMargin, 34);
  if (chart.bars.empty() || total_max <= 0) return svg + svg_text(kMargin, top + 20, "no data", TextStyle(kFont)) + "\n</svg>\n";

  auto px = [&](double v) { return left + axis.fraction(v) * plot_w; };
  for (double t : axis.ticks()) {
    svg += line(px(t), top, px(t), top + plot_h, "#e5e5e5") + line(px(t), top + plot_h, px(t), top + plot_h + 5, "#999") +
           svg_text(px(t), top + plot_h + 18, axis.label(t), TextStyle(kTickFont, "middle").classed("tick")) + "\n";
  }
  svg += "<rect class=\"plot-area\" x=\"" + svg_number(left) + "\" y=\"" + svg_number(top) + "\" width=\"" + svg_number(plot_w) +
         "\" height=\"" + svg_number(plot_h) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StackedBar& bar = chart.bars[b];
    const double y = top + kRowHeight * static_cast<double>(b);
    svg += svg_text(left - 8, y + kRowHeight * 0.68, bar.label,
                    TextStyle(kTickFont, "end").bolded(bar.highlight).colored(bar.highlight ? kHighlight : "").classed("bar-label")) + "\n";
    double x = left;
    for (const auto& segment : bar.segments) {
      const auto part = static_cast<size_t>(std::find(chart.parts.begin(), chart.parts.end(), segment.part) - chart.parts.begin());
      const double w = px(std::max(0.0, segment.value)) - left;
      svg += "<rect class=\"bar\" data-config=\"" + std::to_string(bar.config) + "\" data-series=\"" + html_escape(segment.part) +
             "\" x=\"" + svg_number(x) + "\" y=\"" + svg_number(y + 3) + "\" width=\"" + svg_number(w) + "\" height=\"" +
             svg_number(kRowHeight - 6) + "\" fill=\"" + series_style(part).color + "\"><title>" +
             html_escape(bar.label + ": " + segment.part + " " + format_seconds(segment.value)) + "</title></rect>\n";
      x += w;
    }
    svg += svg_text(x + 6, y + kRowHeight * 0.68, format_seconds(totals[b]), TextStyle(kTickFont).colored("#555").classed("bar-total")) + "\n";
  }
  svg += svg_text(left + plot_w / 2, top + plot_h + 42, chart.value_label, TextStyle(kFont, "middle")) + "\n";
  return svg + "</svg>\n";
}

}  // namespace placesim
