#include "sim/core/csv_fields.h"

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

}  // namespace placesim
