#include "sim/report/chart/series_style.h"

#include <cmath>

#include "sim/core/units_format.h"

namespace placesim {
namespace {

// Tableau 10 (Tableau's default categorical palette), which stays distinguishable for the
// common forms of colour blindness better than primary colours; red is left to highlights.
const char* const kColors[kSeriesColors] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2",
                                            "#edc948", "#9c755f", "#ff9da7", "#bab0ac", "#17becf"};

std::string xy(double x, double y) { return format_number(x, "%.2f") + "," + format_number(y, "%.2f"); }

}  // namespace

SeriesStyle series_style(size_t index) {
  return {kColors[index % kSeriesColors], static_cast<MarkerShape>((index + index / kSeriesColors) % kMarkerShapes)};
}

const char* marker_name(MarkerShape shape) {
  switch (shape) {
    case MarkerShape::kCircle: return "circle";
    case MarkerShape::kSquare: return "square";
    case MarkerShape::kTriangle: return "triangle";
    case MarkerShape::kDiamond: return "diamond";
    case MarkerShape::kTriangleDown: return "triangle-down";
    case MarkerShape::kCross: return "cross";
  }
  return "circle";
}

std::string marker_path(MarkerShape shape, double x, double y, double size) {
  const double r = size / 2;
  switch (shape) {
    case MarkerShape::kCircle:
      return "M " + xy(x - r, y) + " A " + xy(r, r) + " 0 1 0 " + xy(x + r, y) + " A " + xy(r, r) + " 0 1 0 " +
             xy(x - r, y) + " Z";
    case MarkerShape::kSquare: {
      const double h = r * 0.85;  // the same visual weight as the circle
      return "M " + xy(x - h, y - h) + " L " + xy(x + h, y - h) + " L " + xy(x + h, y + h) + " L " + xy(x - h, y + h) + " Z";
    }
    case MarkerShape::kTriangle:
      return "M " + xy(x, y - r) + " L " + xy(x + r, y + r * 0.8) + " L " + xy(x - r, y + r * 0.8) + " Z";
    case MarkerShape::kDiamond:
      return "M " + xy(x, y - r) + " L " + xy(x + r, y) + " L " + xy(x, y + r) + " L " + xy(x - r, y) + " Z";
    case MarkerShape::kTriangleDown:
      return "M " + xy(x, y + r) + " L " + xy(x + r, y - r * 0.8) + " L " + xy(x - r, y - r * 0.8) + " Z";
    case MarkerShape::kCross: {
      const double t = r * 0.35;  // half the arm's thickness
      return "M " + xy(x - t, y - r) + " L " + xy(x + t, y - r) + " L " + xy(x + t, y - t) + " L " + xy(x + r, y - t) +
             " L " + xy(x + r, y + t) + " L " + xy(x + t, y + t) + " L " + xy(x + t, y + r) + " L " + xy(x - t, y + r) +
             " L " + xy(x - t, y + t) + " L " + xy(x - r, y + t) + " L " + xy(x - r, y - t) + " L " + xy(x - t, y - t) + " Z";
    }
  }
  return "";
}

}  // namespace placesim
