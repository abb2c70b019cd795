// A device profile's "kernel_model" object (sim/cluster/kernel_model.h), read and written.
#pragma once

#include "sim/cluster/kernel_model.h"
#include "sim/core/json_reader.h"

namespace placesim {

/// Every value range-checked; "fit" with a non-empty "table" is required (the provenance).
KernelModel read_kernel_model(const JsonReader& entry);
Json write_kernel_model(const KernelModel& model);

}  // namespace placesim
