// Human-readable quantities for reports: "1.234 ms", "8.0 MiB", "12.5 GB/s", "41.2%".
#pragma once

#include <cstddef>
#include <string>

namespace placesim {

std::string format_seconds(double seconds);
std::string format_bytes(double bytes);
std::string format_percent(double fraction);
std::string format_rate(double per_second, const std::string& unit);
/// FLOPs in billions with one decimal: "12.3 GFLOP".
std::string format_gigaflops(double flops);
/// One number with a printf format ("%.3f"), for table cells.
std::string format_number(double value, const char* format);
/// `text` padded with spaces to `width`: right-aligned, or left-aligned with `left`.
std::string pad(const std::string& text, size_t width, bool left = false);

}  // namespace placesim
