#include "sim/core/csv_fields.h"

#include <cstdlib>

namespace placesim {

std::vector<std::string> split_csv_fields(const std::string& line, size_t columns) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (fields.size() + 1 < columns) {
    size_t comma = line.find(',', start);
    if (comma == std::string::npos) break;
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

std::string neutralise_formula(const std::string& text) {
  if (text.empty() || std::string("=+-@\t\r").find(text.front()) == std::string::npos) return text;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  const bool plain_number = end == text.c_str() + text.size() && text.find_first_of("\t\r") == std::string::npos;
  return plain_number ? text : "'" + text;
}

std::string csv_cell(const std::string& text) {
  std::string cell = neutralise_formula(text);
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string quoted;
  quoted.reserve(cell.size() + 2);
  quoted += '"';
  for (char c : cell) {
    if (c == '"') quoted += '"';  // doubled
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

}  // namespace placesim
