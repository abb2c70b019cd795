// SeriesStyle: the colour and marker shape that tell one chart series from another. Series i
// gets colour i mod 10 and marker (i + floor(i / 10)) mod 6, so the first 60 series all have a
// distinct (colour, marker) pair; marker_path draws the shape as one SVG path.
#pragma once

#include <cstddef>
#include <string>

namespace placesim {

/// The marker drawn at each point of a series (and in its legend entry).
enum class MarkerShape { kCircle, kSquare, kTriangle, kDiamond, kTriangleDown, kCross };

/// What tells a series apart: its colour and its marker.
struct SeriesStyle {
  std::string color;  ///< "#rrggbb"
  MarkerShape marker = MarkerShape::kCircle;
};

constexpr size_t kSeriesColors = 10;
constexpr size_t kMarkerShapes = 6;

/// The style of the series at `index` (see above for the rule).
SeriesStyle series_style(size_t index);

/// The shape's name ("circle", "square", ...), for data-marker attributes and tests.
const char* marker_name(MarkerShape shape);

/// The path data ("M ... Z") of a marker centred at (x, y), `size` user units across.
std::string marker_path(MarkerShape shape, double x, double y, double size);

}  // namespace placesim
