// Reads a strategy's "parallelism" block (data x tensor x pipeline, docs/tensor-parallel.md) and
// checks what can be checked without the model graph: the sizes, the devices and that every
// tensor-parallel group stays inside one machine. Part of the scenario loader.
#pragma once

#include "sim/core/json_reader.h"
#include "sim/spec/strategy.h"

namespace placesim {

ParallelismOptions read_parallelism(const JsonReader& reader, const Cluster& cluster);

}  // namespace placesim
