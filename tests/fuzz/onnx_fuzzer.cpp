// Fuzzes ONNX model files (sim/graph/onnx/onnx_model.h): the bytes are a file's contents, imported
// with a batch of 2 for symbolic first dimensions (as `placesim check model.onnx` binds 1), and a
// model that imports is exported again (`placesim export-onnx`). InputError is the promised outcome
// for a bad file; anything else escapes and libFuzzer reports it. Needs a build with libonnx-dev
// (scripts/fuzz.sh turns ONNX on); without it every input is the "built without ONNX" InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/core/input_error.h"
#include "sim/graph/onnx/onnx_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  placesim::OnnxImportOptions options;
  options.default_batch = 2;
  try {
    placesim::OpGraph graph =
        placesim::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx", options);
    placesim::export_onnx_model(graph);
  } catch (const placesim::InputError&) {
  }
  return 0;
}
