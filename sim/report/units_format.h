// Human-readable quantities for reports: "1.234 ms", "8.0 MiB", "12.5 GB/s", "41.2%".
#pragma once

#include <string>

namespace placesim {

std::string format_seconds(double seconds);
std::string format_bytes(double bytes);
std::string format_percent(double fraction);
std::string format_rate(double per_second, const std::string& unit);

}  // namespace placesim
