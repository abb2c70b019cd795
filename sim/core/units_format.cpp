#include "sim/core/units_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace placesim {
namespace {
// Sized to what snprintf needs: a 1e308 value in %.3f is 313 characters, never cut.
std::string printf_string(const char* format, double value, const char* unit) {
  int size = std::snprintf(nullptr, 0, format, value, unit);
  std::string text(static_cast<size_t>(std::max(size, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, value, unit);
  text.resize(static_cast<size_t>(std::max(size, 0)));
  return text;
}

// Inputs are refused when not finite (JsonReader::as_number); a computed inf or NaN still prints
// as such, without a unit that would make it look like a quantity.
std::string non_finite(double value) { return std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf"; }
}  // namespace

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return non_finite(seconds);
  double magnitude = std::fabs(seconds);
  if (magnitude < 1e-12) return "0 s";  // below the simulator's clock resolution
  if (magnitude < 1e-6) return printf_string("%.1f %s", seconds * 1e9, "ns");
  if (magnitude < 1e-3) return printf_string("%.3f %s", seconds * 1e6, "us");
  if (magnitude < 1) return printf_string("%.3f %s", seconds * 1e3, "ms");
  if (magnitude < 1e9) return printf_string("%.3f %s", seconds, "s");
  return printf_string("%.3e %s", seconds, "s");  // 31 years and more: the digits say nothing
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return non_finite(bytes);
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = bytes;
  int unit = 0;
  while (std::fabs(scaled) >= 1024 && unit < 6) {
    scaled /= 1024;
    ++unit;
  }
  if (std::fabs(scaled) >= 1024) return printf_string("%.3e %s", bytes, "B");  // 1 ZiB and more
  return printf_string(unit == 0 ? "%.0f %s" : "%.1f %s", scaled, units[unit]);
}

std::string format_percent(double fraction) { return printf_string("%.1f%s", fraction * 100, "%"); }

std::string format_rate(double per_second, const std::string& unit) {
  if (!std::isfinite(per_second)) return non_finite(per_second) + " " + unit + "/s";
  return printf_string("%.1f %s", per_second, (unit + "/s").c_str());
}

std::string format_gigaflops(double flops) { return printf_string("%.1f %s", flops / 1e9, "GFLOP"); }

std::string format_number(double value, const char* format) {
  int size = std::snprintf(nullptr, 0, format, value);
  std::string text(static_cast<size_t>(std::max(size, 0)) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, value);
  text.resize(static_cast<size_t>(std::max(size, 0)));
  return text;
}

std::string pad(const std::string& text, size_t width, bool left) {
  if (text.size() >= width) return text;
  return left ? text + std::string(width - text.size(), ' ') : std::string(width - text.size(), ' ') + text;
}

}  // namespace placesim
