// Inline SVG charts for the sweep's HTML report, with no script and no external style: a
// scatter chart (points, optional lines per series, linear or log axes) and a horizontal stacked
// bar chart. Each data point is an element with class "point" (or "bar") and a data-config
// attribute naming its configuration, and a <title> tooltip.
#pragma once

#include <string>
#include <vector>

#include "sim/report/html_escape.h"

namespace placesim {

struct ChartPoint {
  double x = 0;
  double y = 0;
  size_t config = 0;
  std::string tooltip;
  bool highlight = false;  ///< drawn larger, in the highlight colour (the recommendation)
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
  bool line = false;  ///< join the points in x order (for each x, the largest y)
  bool step_line = false;  ///< join in x order with a staircase (a Pareto frontier)
  std::string color;  ///< empty = from the palette
};

struct ScatterChart {
  std::string id;  ///< the <svg> element's id
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::vector<ChartSeries> series;
};

struct BarSegment {
  std::string part;  ///< legend name
  double value = 0;
};

struct StackedBar {
  std::string label;
  size_t config = 0;
  std::vector<BarSegment> segments;
  bool highlight = false;
};

struct StackedBarChart {
  std::string id;
  std::string title;
  std::string value_label;
  std::vector<std::string> parts;  ///< legend order, one colour each
  std::vector<StackedBar> bars;
};

std::string render_scatter(const ScatterChart& chart);
std::string render_stacked_bars(const StackedBarChart& chart);

}  // namespace placesim
