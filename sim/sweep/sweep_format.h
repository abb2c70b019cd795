// How the sweep's reports write money and long durations: "$1,234.56", "3.2 h", "4.1 days".
#pragma once

#include <string>

namespace placesim {

/// "$0.42", "$12.30", "$1,234" (cents below $1,000).
std::string format_usd(double usd);
/// Seconds as "45 s", "12.5 min", "3.2 h" or "4.1 days".
std::string format_duration(double seconds);
/// A number with 3 significant digits ("1.23e+04" avoided: "12300").
std::string format_number(double value);

}  // namespace placesim
