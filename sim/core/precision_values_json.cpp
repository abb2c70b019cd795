#include "sim/core/precision_values_json.h"

namespace placesim {

std::map<Precision, double> read_precision_values(const JsonReader& object,
                                                  const std::function<double(Precision, const JsonReader&)>& value) {
  object.reject_unknown_keys(precision_names());
  std::map<Precision, double> values;
  for (const auto& key : object.keys()) {
    const Precision precision = *parse_precision(key);
    values[precision] = value(precision, object.at(key));
  }
  return values;
}

Json precision_values_json(const std::map<Precision, double>& values) {
  Json json = Json::object();
  for (const auto& [precision, value] : values) json[to_string(precision)] = value;
  return json;
}

}  // namespace placesim
