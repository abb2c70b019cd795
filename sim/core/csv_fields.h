// Splitting a line of the measured tables under hardware_profiles/ (kernels, collectives): plain
// comma-separated fields with no quoting, the last of which (the source) may itself hold commas.
#pragma once

#include <string>
#include <vector>

namespace placesim {

/// At most `columns` fields; the last takes the rest of the line, commas included. Fewer when the
/// line has fewer commas (the caller reports the missing columns).
std::vector<std::string> split_csv_fields(const std::string& line, size_t columns);

}  // namespace placesim
