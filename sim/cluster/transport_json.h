// Transports as JSON (scenario "transport" objects, plan files' "transports"): every field of
// sim/cluster/transport.h; an "id" naming a bundled transport gives the fields' defaults.
#pragma once

#include "sim/cluster/transport.h"
#include "sim/core/json_reader.h"

namespace placesim {

Json write_transport_json(const Transport& transport);
/// Errors name the file, the JSON path and the bad value.
Transport read_transport_json(const JsonReader& reader);

}  // namespace placesim
