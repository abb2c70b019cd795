// CSV both ways: splitting a line of the measured tables under hardware_profiles/ (kernels,
// collectives: plain comma-separated fields with no quoting, the last of which, the source, may
// itself hold commas), and writing a text cell of placesim's own CSV outputs (sweep results,
// comparisons, convergence curves) that a spreadsheet opens safely.
#pragma once

#include <string>
#include <vector>

namespace placesim {

/// At most `columns` fields; the last takes the rest of the line, commas included. Fewer when the
/// line has fewer commas (the caller reports the missing columns).
std::vector<std::string> split_csv_fields(const std::string& line, size_t columns);

/// `text` with a leading ' when a spreadsheet would run it as a formula (it starts with = + - @,
/// a tab or a carriage return; OWASP's advice for CSV injection), unless it is a plain number
/// such as "-3"; otherwise `text` unchanged.
std::string neutralise_formula(const std::string& text);

/// `text` as one CSV cell (RFC 4180): neutralised as above, then quoted, with quotes doubled, when
/// it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text);

}  // namespace placesim
