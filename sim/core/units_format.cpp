#include "sim/core/units_format.h"

#include <cmath>
#include <cstdio>

namespace placesim {
namespace {
std::string printf_string(const char* format, double value, const char* unit) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value, unit);
  return buffer;
}
}  // namespace

std::string format_seconds(double seconds) {
  double magnitude = std::fabs(seconds);
  if (magnitude < 1e-12) return "0 s";  // below the simulator's clock resolution
  if (magnitude < 1e-6) return printf_string("%.1f %s", seconds * 1e9, "ns");
  if (magnitude < 1e-3) return printf_string("%.3f %s", seconds * 1e6, "us");
  if (magnitude < 1) return printf_string("%.3f %s", seconds * 1e3, "ms");
  return printf_string("%.3f %s", seconds, "s");
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return printf_string(unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
}

std::string format_percent(double fraction) { return printf_string("%.1f%s", fraction * 100, "%"); }

std::string format_rate(double per_second, const std::string& unit) {
  return printf_string("%.1f %s", per_second, (unit + "/s").c_str());
}

std::string format_number(double value, const char* format) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string pad(const std::string& text, size_t width, bool left) {
  if (text.size() >= width) return text;
  return left ? text + std::string(width - text.size(), ' ') : std::string(width - text.size(), ' ') + text;
}

}  // namespace placesim
