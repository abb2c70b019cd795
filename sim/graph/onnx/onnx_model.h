// ONNX import and export of model graphs (docs/onnx.md). The importer reads an ONNX file, runs
// ONNX shape inference with the caller's input shapes and costs every node by the zoo's
// conventions (docs/model-graphs.md), so later stages see an ordinary OpGraph; the exporter
// writes an OpGraph as a weight-free ONNX model that opens in Netron and re-imports to the same
// totals. Only the scenario loader and the CLI call these. Stateless; thread-safe.
//
// When placesim is built without libonnx-dev, the same functions exist and throw InputError
// ("built without ONNX support"); onnx_support_available() says which build this is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"

namespace placesim {

struct OnnxImportOptions {
  /// Shapes of the graph's data inputs by name (batch first); they replace the declared shapes.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Where input_shapes came from, for errors about them: a file and JSON pointer (the scenario's
  /// "/model/inputs"), or a flag ("--input") and "".
  std::string input_shapes_file;
  std::string input_shapes_path;
  /// When > 0, a data input not in input_shapes whose first dimension is symbolic or unknown gets
  /// this batch size (other symbolic dimensions must be bound by input_shapes).
  int64_t default_batch = 0;
  /// When the file records the batch it was exported at (metadata "placesim.batch", written by
  /// export-onnx), that batch replaces default_batch: a file exported with --batch 32 re-imports at
  /// 32 unless the caller gives a batch of its own (then this is false).
  bool batch_from_metadata = false;
  /// Element size of floating-point tensors (the run's precision), as the zoo uses.
  double dtype_bytes = 4;
  /// Refuse operators placesim cannot cost instead of costing them as memory-bound.
  bool strict = false;
  /// Where warnings go (unknown operators, assumed shapes); nullptr = nowhere.
  std::ostream* warnings = nullptr;
};

/// True when this build reads and writes ONNX (libonnx-dev was found at configure time).
bool onnx_support_available();

/// Imports an ONNX model file as a training graph. Throws InputError naming the file and the
/// protobuf path of the problem ("/graph/node/12"), or "/" for a file that is not ONNX at all;
/// errors about input_shapes name input_shapes_file and input_shapes_path.
OpGraph import_onnx_model(const std::filesystem::path& path, const OnnxImportOptions& options);

/// Imports an ONNX file's contents already in memory (the fuzzer's entry point); errors name
/// `file`, as import_onnx_model's name the path.
OpGraph import_onnx_bytes(const std::string& bytes, const std::string& file, const OnnxImportOptions& options);

/// Serializes `graph` as an ONNX model without weights (initializers declare their shapes and
/// point at external data that is not written). See docs/onnx.md for the operator mapping.
std::string export_onnx_model(const OpGraph& graph);

}  // namespace placesim
