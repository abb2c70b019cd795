// The model zoo: builds the training graph of a named model (ResNet, GPT, the TensorFlow seed
// example, ...) for one step of a given batch, with costs per docs/model-graphs.md. Scenarios
// name a zoo model instead of shipping a graph file. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/json_reader.h"
#include "sim/graph/op_graph.h"

namespace placesim {

/// Builds zoo model `name` for a step of `batch_size` samples with elements of `dtype_bytes` bytes.
/// `parameters` is the scenario's model parameters object (may be an empty object or null); unknown
/// keys and bad values throw InputError at their JSON path, as do parameters the model cannot be
/// built with (an image too small for the network's kernels: reported at "image_size").
/// An unknown name throws InputError naming parameters.file() but no path (the name's path is not
/// known here; use the overload below when it is). batch_size < 1 or dtype_bytes <= 0 are caller
/// bugs (the scenario loader checks them): std::invalid_argument.
OpGraph build_zoo_model(const std::string& name, const JsonReader& parameters, int64_t batch_size, double dtype_bytes);

/// As above, reading the name from `name_at` (a JSON string), so that a bad or unknown name is
/// reported at its own path, with a did-you-mean and the list of available models.
OpGraph build_zoo_model(const JsonReader& name_at, const JsonReader& parameters, int64_t batch_size,
                        double dtype_bytes);

/// Names build_zoo_model accepts, in documentation order.
std::vector<std::string> zoo_model_names();

}  // namespace placesim
