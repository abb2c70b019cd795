// SVG <text> elements with their content escaped, and an estimate of a text's rendered width,
// which chart layouts use to leave room for labels and legends without a browser to measure them.
#pragma once

#include <string>
#include <utility>

namespace placesim {

/// How a <text> looks: TextStyle(11, "end").classed("tick").
struct TextStyle {
  explicit TextStyle(double size = 12, const char* text_anchor = "start") : font_size(size), anchor(text_anchor) {}
  TextStyle& bolded(bool on = true) { bold = on; return *this; }
  TextStyle& colored(std::string color) { fill = std::move(color); return *this; }
  TextStyle& rotated(double degrees) { rotate_degrees = degrees; return *this; }
  TextStyle& classed(std::string name) { css_class = std::move(name); return *this; }

  double font_size;
  const char* anchor;  ///< "start", "middle" or "end"
  bool bold = false;
  std::string fill;  ///< empty: the default (black)
  double rotate_degrees = 0;  ///< about (x, y)
  std::string css_class;
};

/// An upper estimate of the width of `text` in a sans-serif font (DejaVu Sans, the Debian
/// default, is among the widest), in the units of `font_size`: per-character widths in em.
double text_width(const std::string& text, double font_size);

/// <text x y ...>escaped text</text>
std::string svg_text(double x, double y, const std::string& text, const TextStyle& style = TextStyle());

/// A coordinate as SVG prints it (2 decimals).
std::string svg_number(double value);

}  // namespace placesim
