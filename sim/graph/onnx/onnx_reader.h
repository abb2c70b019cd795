// Reading an ONNX model: a file's bytes within protobuf's limit, the parsed ModelProto with its
// opsets and metadata, and ONNX shape inference in a child process. Internal to placesim_onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <string>

namespace placesim {

/// The contents of an ONNX file at `path`: refused when protobuf could not parse it (2 GiB or
/// more), then read as every input file is (sim/core/json_reader.h: read_input_file). Throws
/// InputError naming the path.
std::string read_onnx_file(const std::filesystem::path& path);

/// A parsed model and what the importer looks up in it.
struct OnnxModelProto {
  ::ONNX_NAMESPACE::ModelProto model;
  /// Opset version by domain; the default ONNX domain ("ai.onnx" included) is "".
  std::map<std::string, int> opsets;
  /// metadata_props by key ("placesim.batch", "placesim.dtype_bytes" from export-onnx).
  std::map<std::string, std::string> metadata;
};

/// Parses `bytes` as an ONNX model with a graph of at least one node and an opset of the default
/// domain. Throws InputError naming `file` and the protobuf path ("/", "/opset_import", "/graph/node").
OnnxModelProto parse_onnx_model(const std::string& bytes, const std::string& file);

/// ONNX shape inference (opset of the file, data propagation on; error_mode 1: the first error
/// stops it) on `model`, in a child process, so that a crash of ONNX 1.12 on a malformed model
/// kills only the child. On success the model's value_info and outputs are the inferred ones and
/// "" is returned; otherwise why inference failed. Throws std::runtime_error when it cannot fork.
std::string infer_in_child_process(::ONNX_NAMESPACE::ModelProto& model, int error_mode);

}  // namespace placesim
