#include "sim/report/chart/svg_text.h"

#include <cctype>
#include <cstring>

#include "sim/core/units_format.h"
#include "sim/report/html_escape.h"

namespace placesim {
namespace {

// Advance widths in em, rounded up from DejaVu Sans (the widest of the common sans fonts):
// narrow punctuation and i/l/j ~0.28-0.35, lowercase ~0.61-0.63, digits 0.64, capitals up to
// 0.77, m/w and M/W ~0.98.
double char_em(unsigned char c) {
  if (std::strchr(" .,:;'|!ijl()[]", c)) return 0.36;
  if (std::strchr("frt-/", c)) return 0.44;
  if (std::strchr("mwMW%@", c)) return 1.0;
  if (std::isdigit(c)) return 0.64;
  if (std::isupper(c)) return 0.78;
  return 0.64;
}

}  // namespace

double text_width(const std::string& text, double font_size) {
  double em = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: counted with its lead byte
    em += c >= 0x80 ? 1.0 : char_em(c);
  }
  return em * font_size;
}

std::string svg_number(double value) { return format_number(value, "%.2f"); }

std::string svg_text(double x, double y, const std::string& text, const TextStyle& style) {
  std::string out = "<text";
  if (!style.css_class.empty()) out += " class=\"" + html_escape(style.css_class) + "\"";
  out += " x=\"" + svg_number(x) + "\" y=\"" + svg_number(y) + "\"";
  if (std::strcmp(style.anchor, "start") != 0) out += " text-anchor=\"" + std::string(style.anchor) + "\"";
  out += " font-size=\"" + format_number(style.font_size, "%g") + "\"";
  if (style.bold) out += " font-weight=\"bold\"";
  if (!style.fill.empty()) out += " fill=\"" + html_escape(style.fill) + "\"";
  if (style.rotate_degrees != 0) {
    out += " transform=\"rotate(" + format_number(style.rotate_degrees, "%g") + " " + svg_number(x) + " " + svg_number(y) + ")\"";
  }
  return out + ">" + html_escape(text) + "</text>";
}

}  // namespace placesim
