#include "sim/report/chart/chart_legend.h"

#include <algorithm>

#include "sim/report/chart/svg_text.h"
#include "sim/report/html_escape.h"

namespace placesim {
namespace {

constexpr double kSymbolWidth = 24;  // the symbol and the gap before the label
constexpr double kEntryGap = 16;     // between two entries of one row

}  // namespace

ChartLegend::ChartLegend(std::vector<LegendEntry> entries, double max_width, double font_size)
    : entries_(std::move(entries)), font_size_(font_size) {
  const double row_height = font_size * 1.5;
  double x = 0, y = 0;
  for (const LegendEntry& entry : entries_) {
    const double w = entry_width(entry);
    if (x > 0 && x + w > max_width) x = 0, y += row_height;
    placed_.push_back({x, y});
    width_ = std::max(width_, x + w);
    x += w + kEntryGap;
  }
  height_ = entries_.empty() ? 0 : y + row_height;
}

double ChartLegend::entry_width(const LegendEntry& entry) const {
  return kSymbolWidth + text_width(entry.label, font_size_);
}

std::string ChartLegend::render(double x, double y) const {
  std::string svg = "<g class=\"legend\">\n";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const LegendEntry& entry = entries_[i];
    const double left = x + placed_[i].x, middle = y + placed_[i].y + font_size_ * 0.75;
    const std::string& color = entry.style.color;
    svg += "<g class=\"legend-entry\" data-series=\"" + html_escape(entry.series.empty() ? entry.label : entry.series) +
           "\" data-color=\"" + color + "\" data-marker=\"" + marker_name(entry.style.marker) + "\">";
    if (entry.symbol == LegendSymbol::kLine || entry.symbol == LegendSymbol::kMarkerAndLine) {
      svg += "<line x1=\"" + svg_number(left) + "\" x2=\"" + svg_number(left + 18) + "\" y1=\"" + svg_number(middle) +
             "\" y2=\"" + svg_number(middle) + "\" stroke=\"" + color + "\" stroke-width=\"2\"/>";
    }
    if (entry.symbol == LegendSymbol::kMarker || entry.symbol == LegendSymbol::kMarkerAndLine) {
      svg += "<path d=\"" + marker_path(entry.style.marker, left + 9, middle, 10) + "\" fill=\"#fff\" stroke=\"" + color +
             "\" stroke-width=\"1.8\"/>";
    }
    if (entry.symbol == LegendSymbol::kSwatch) {
      svg += "<rect x=\"" + svg_number(left + 3) + "\" y=\"" + svg_number(middle - 6) +
             "\" width=\"12\" height=\"12\" fill=\"" + color + "\"/>";
    }
    svg += svg_text(left + kSymbolWidth, middle + font_size_ * 0.35, entry.label, TextStyle(font_size_)) + "</g>\n";
  }
  return svg + "</g>\n";
}

}  // namespace placesim
