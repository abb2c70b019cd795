// The ONNX entry points of a build without libonnx-dev: every call explains how to get them.
#include "sim/core/input_error.h"
#include "sim/graph/onnx/onnx_model.h"

namespace placesim {
namespace {

const char* const kHowToEnable =
    "this placesim was built without ONNX support; install libonnx-dev and libprotobuf-dev "
    "(scripts/install_deps.sh does) and rebuild";

}  // namespace

bool onnx_support_available() { return false; }

OpGraph import_onnx_model(const std::filesystem::path& path, const OnnxImportOptions& /*options*/) {
  throw InputError(path.string(), "", kHowToEnable);
}

OpGraph import_onnx_bytes(const std::string& /*bytes*/, const std::string& file, const OnnxImportOptions& /*options*/) {
  throw InputError(file, "", kHowToEnable);
}

std::string export_onnx_model(const OpGraph& /*graph*/) { throw InputError("", "", kHowToEnable); }

}  // namespace placesim
