// Reads a scenario's "sweep" section into a SweepSpec (sim/sweep/sweep_spec.h): node types,
// dimensions, strategy variants (their lists multiplied out, each value's JSON path kept),
// constraints, prices and fidelity, then the expansion into configurations. Part of the scenario
// loader: every problem is an InputError at its JSON path.
#pragma once

#include "sim/cluster/hardware_catalog.h"
#include "sim/core/json_reader.h"
#include "sim/sweep/sweep_spec.h"

namespace placesim {

/// Reads `document`'s "sweep" (the whole scenario document is needed for its defaults: the
/// cluster template, run.batch_size, run.precision, the gpt zoo's sequence). Throws InputError
/// with the JSON path of the first problem.
SweepSpec read_sweep_spec(const JsonReader& document, const HardwareCatalog& catalog);

}  // namespace placesim
