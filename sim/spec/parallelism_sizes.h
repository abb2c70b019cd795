// How a `parallelism` strategy's sizes read in messages and notes: "data 2 x pipeline 4 x tensor
// 8", with context ranks when there are some, or PipeDream's "stage replicas 15 + 1 x tensor 1".
#pragma once

#include <string>

#include "sim/spec/strategy.h"

namespace placesim {

std::string parallelism_sizes_text(const ParallelismOptions& options);

}  // namespace placesim
