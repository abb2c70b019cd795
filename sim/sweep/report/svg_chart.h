// Inline SVG charts for the sweep's HTML report, with no script and no external style: a
// scatter chart (a colour and marker per series, optional lines, linear or log axes with nice
// ticks, a legend) and a horizontal stacked bar chart. Each data point is an element with class
// "point" (or "bar"), a data-config attribute naming its configuration, a data-series attribute
// naming its series, and a <title> tooltip. Axes, ticks, legends and markers: sim/report/chart/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/report/chart/chart_axis.h"
#include "sim/report/chart/series_style.h"

namespace placesim {

/// Width of every chart, in SVG user units (= CSS pixels at 100%): a 1400 px page's content.
constexpr double kChartWidth = 1300;

/// One configuration on a scatter chart.
struct ChartPoint {
  double x = 0;
  double y = 0;
  size_t config = 0;
  std::string tooltip;
  bool highlight = false;  ///< ringed in the highlight colour (the recommendation)
};

/// The points of one series (a strategy on one device type at one batch), drawn in one style.
struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
  bool line = false;  ///< join the points in x order (for each x, the largest y)
  bool step_line = false;  ///< join in x order with a staircase (a Pareto frontier)
  std::optional<SeriesStyle> style;  ///< none = series_style(its index)
};

/// A scatter chart: its axes, series, and a note on what it leaves out.
struct ScatterChart {
  std::string id;  ///< the <svg> element's id
  std::string title;
  std::string x_label;
  std::string y_label;
  AxisScale x_scale = AxisScale::kLinear;
  AxisScale y_scale = AxisScale::kLinear;
  std::vector<ChartSeries> series;
  std::string note;  ///< printed under the plot (what the chart leaves out and why)
  /// Shift each series a few pixels sideways, in series order, so that series with equal values
  /// at one x (strategies that tie on one device) sit side by side instead of on top.
  bool spread_series = false;
};

/// One part of a bar (compute, exposed communication, ...) and its value.
struct BarSegment {
  std::string part;  ///< legend name
  double value = 0;
};

/// One configuration's row of a stacked bar chart.
struct StackedBar {
  std::string label;
  size_t config = 0;
  std::vector<BarSegment> segments;
  bool highlight = false;
};

/// A horizontal stacked bar chart: one row per configuration, one colour per part.
struct StackedBarChart {
  std::string id;
  std::string title;
  std::string value_label;
  std::vector<std::string> parts;  ///< legend order, one colour each
  std::vector<StackedBar> bars;
};

/// The chart as an <svg>: axes, a legend entry per series (a label wider than 35% of the chart
/// shortened, its elements keeping the full name), then each series' line and markers. Markers
/// of one series whose centres share a half-pixel square are drawn once, their tooltip naming
/// the other configurations there.
std::string render_scatter(const ScatterChart& chart);
std::string render_stacked_bars(const StackedBarChart& chart);

}  // namespace placesim
