// ChartLegend: one entry per series (its symbol and name), laid out in rows that wrap at a
// given width, measured with text_width so that a chart can reserve its room before drawing.
#pragma once

#include <string>
#include <vector>

#include "sim/report/chart/series_style.h"

namespace placesim {

/// What a legend entry draws before its label: the marker, a line through the marker, a line,
/// a filled square.
enum class LegendSymbol { kMarker, kMarkerAndLine, kLine, kSwatch };

/// One series in a legend: its label, style and symbol.
struct LegendEntry {
  std::string label;
  SeriesStyle style;
  LegendSymbol symbol = LegendSymbol::kMarker;
  std::string series;  ///< the data-series name its chart elements carry (empty: the label)
};

/// The legend of one chart, measured at construction and drawn where the chart puts it.
class ChartLegend {
 public:
  /// Entries flow left to right and wrap before `max_width` (a narrow width: one per row).
  ChartLegend(std::vector<LegendEntry> entries, double max_width, double font_size = 12);

  double width() const { return width_; }
  double height() const { return height_; }
  /// <g class="legend"> with one <g class="legend-entry" data-series=...> per entry, its top
  /// left corner at (x, y).
  std::string render(double x, double y) const;

 private:
  struct Placed {
    double x, y;  ///< of the entry's top left corner, relative to the legend's
  };
  double entry_width(const LegendEntry& entry) const;

  std::vector<LegendEntry> entries_;
  std::vector<Placed> placed_;
  double font_size_;
  double width_ = 0, height_ = 0;
};

}  // namespace placesim
