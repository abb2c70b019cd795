// Numbers by precision in JSON ({"fp32": 1.95e13, "bf16": 3.12e14}), as device profiles and kernel
// models hold peaks, efficiencies, tile overheads, input-power fractions and matmul ceilings.
#pragma once

#include <functional>
#include <map>

#include "sim/core/json_reader.h"
#include "sim/core/precision.h"

namespace placesim {

/// `object`'s entries by precision: a key that is not a precision name is refused (naming them),
/// and each value is read (and checked) by `value`, given its precision.
std::map<Precision, double> read_precision_values(const JsonReader& object,
                                                  const std::function<double(Precision, const JsonReader&)>& value);

/// The same map written back: one key per precision, in the map's order.
Json precision_values_json(const std::map<Precision, double>& values);

}  // namespace placesim
