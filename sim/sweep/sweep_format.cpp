#include "sim/sweep/sweep_format.h"

#include <cmath>
#include <cstdio>

namespace placesim {

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return "-";
  char buffer[64];
  if (usd < 1000) {
    std::snprintf(buffer, sizeof buffer, "$%.2f", usd);
    return buffer;
  }
  std::string digits = std::to_string(std::llround(usd));
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return "$" + grouped;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  char buffer[64];
  if (seconds < 60) std::snprintf(buffer, sizeof buffer, "%.3g s", seconds);
  else if (seconds < 3600) std::snprintf(buffer, sizeof buffer, "%.3g min", seconds / 60);
  else if (seconds < 86400 * 2) std::snprintf(buffer, sizeof buffer, "%.3g h", seconds / 3600);
  else std::snprintf(buffer, sizeof buffer, "%.3g days", seconds / 86400);
  return buffer;
}

std::string format_number(double value) {
  if (!std::isfinite(value)) return "-";
  char buffer[64];
  if (std::fabs(value) >= 1000) std::snprintf(buffer, sizeof buffer, "%.0f", value);
  else std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

}  // namespace placesim
