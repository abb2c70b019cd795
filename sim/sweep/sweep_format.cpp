#include "sim/sweep/sweep_format.h"

#include <cmath>
#include <cstdio>

namespace placesim {
namespace {
// Sized to what snprintf needs, so a huge value is never cut.
std::string printf_string(const char* format, double value) {
  int size = std::snprintf(nullptr, 0, format, value);
  std::string text(static_cast<size_t>(size > 0 ? size : 0) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, value);
  text.resize(static_cast<size_t>(size > 0 ? size : 0));
  return text;
}
}  // namespace

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return "-";
  if (usd < 1000) return printf_string("$%.2f", usd);
  if (usd >= 1e15) return printf_string("$%.3e", usd);  // llround would overflow
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
  if (seconds < 60) return printf_string("%.3g s", seconds);
  if (seconds < 3600) return printf_string("%.3g min", seconds / 60);
  if (seconds < 86400 * 2) return printf_string("%.3g h", seconds / 3600);
  return printf_string("%.3g days", seconds / 86400);
}

std::string format_number(double value) {
  if (!std::isfinite(value)) return "-";
  if (std::fabs(value) >= 1e15) return printf_string("%.3e", value);
  if (std::fabs(value) >= 1000) return printf_string("%.0f", value);
  return printf_string("%.3g", value);
}

}  // namespace placesim
