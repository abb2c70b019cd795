// MODEL arguments of `placesim inspect` and `placesim export-onnx`: a zoo model name, a scenario
// file, a model graph file or an ONNX file, resolved to an OpGraph with the flags that apply to
// each (docs/onnx.md, "Command line").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/cluster/hardware_catalog.h"
#include "sim/graph/op_graph.h"

namespace placesim {

struct ModelSourceOptions {
  /// Zoo models (default 1); ONNX inputs with a symbolic first dimension (default: the batch the
  /// file was exported at, its "placesim.batch" metadata, else 1). 0: not given.
  int64_t batch = 0;
  std::string precision = "fp32";   ///< element size of zoo models and of ONNX float tensors
  std::string parameters;           ///< zoo model parameters as a JSON object
  std::vector<std::string> inputs;  ///< ONNX input shapes, NAME=D0,D1,...
  bool strict = false;              ///< ONNX: refuse operators placesim cannot cost
};

void add_model_source_options(CLI::App* command, ModelSourceOptions* options);

/// The graph MODEL names. A scenario file brings its own batch and precision (the flags are
/// ignored). Throws InputError for a bad model, file or flag.
OpGraph load_model_source(const std::string& model, const ModelSourceOptions& options, const HardwareCatalog& catalog);

}  // namespace placesim
