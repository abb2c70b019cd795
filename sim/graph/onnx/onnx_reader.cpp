#include "sim/graph/onnx/onnx_reader.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "sim/core/fd_io.h"
#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"
#include "sim/graph/onnx/onnx_window_checks.h"

namespace placesim {
namespace {

namespace pb = ::ONNX_NAMESPACE;

// protobuf cannot parse a message of 2 GiB or more; larger models keep their weights outside.
constexpr std::uintmax_t kMaxFileBytes = (std::uintmax_t{1} << 31) - 1;

}  // namespace

std::string read_onnx_file(const std::filesystem::path& path) {
  // protobuf's own limit first, with its remedy; then the rules of every input file (a FIFO or
  // device refused before it is opened, the --max-input-bytes limit: sim/core/json_reader.h).
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) {
    std::uintmax_t size = std::filesystem::file_size(path, error);
    if (!error && size > kMaxFileBytes) {
      throw InputError(path.string(), "/",
                       "the file is " + std::to_string(size) +
                           " bytes; protobuf cannot read an ONNX model of 2 GiB or more (store the weights as external data)");
    }
  }
  return read_input_file(path);
}

OnnxModelProto parse_onnx_model(const std::string& bytes, const std::string& file) {
  auto fail = [&](const std::string& pointer, const std::string& message) { throw InputError(file, pointer, message); };
  OnnxModelProto parsed;
  pb::ModelProto& model = parsed.model;
  const std::uintmax_t size = bytes.size();
  if (size == 0) fail("/", "the file is empty (expected an ONNX model)");
  if (!model.ParseFromString(bytes)) {
    fail("/", "not a valid ONNX model: the protobuf data is truncated or malformed (" + std::to_string(size) +
                  " bytes)");
  }
  if (model.ir_version() <= 0 || !model.has_graph()) {
    fail("/", "not an ONNX model: no ir_version or no graph (is this an ONNX file?)");
  }
  for (const auto& opset : model.opset_import()) {
    std::string domain = opset.domain() == "ai.onnx" ? "" : opset.domain();
    parsed.opsets[domain] = static_cast<int>(opset.version());
  }
  if (!parsed.opsets.count("")) fail("/opset_import", "the model imports no opset of the default ONNX domain");
  if (model.graph().node_size() == 0) fail("/graph/node", "the graph has no nodes");
  for (const auto& property : model.metadata_props()) parsed.metadata[property.key()] = property.value();
  return parsed;
}

// ONNX 1.12's inference functions trust the ranks of their inputs, and a malformed model made them
// read out of bounds (STFT with a rank-0 signal: SIGSEGV, found by the fuzzer after the window and
// schema checks): inference runs in a child process, which sends the inferred value_info and
// outputs back through a pipe.
std::string infer_in_child_process(pb::ModelProto& model, int error_mode) {
  guard_window_shape_inference();
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed before ONNX shape inference");
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed before ONNX shape inference");
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash kills the child with its signal, for the parent to report: sanitizer and fuzzer
    // handlers (which would report it as the parent's own) are taken off.
    for (int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(signal_number, SIG_DFL);
    std::string reply;
    try {
      pb::shape_inference::InferShapes(model, pb::OpSchemaRegistry::Instance(),
                                       pb::ShapeInferenceOptions(/*check_type=*/false, error_mode,
                                                                 /*enable_data_propagation=*/true));
      pb::GraphProto inferred;
      *inferred.mutable_value_info() = model.graph().value_info();
      *inferred.mutable_output() = model.graph().output();
      reply = "0" + inferred.SerializeAsString();
    } catch (const std::exception& error) {
      reply = std::string("1") + error.what();
    }
    ::_exit(write_all(fds[1], reply.data(), reply.size()) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string reply;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      reply.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return "it crashed (signal " + std::to_string(WTERMSIG(status)) +
           ") on this model, which is malformed in a way ONNX 1.12 does not check";
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    return "it stopped without a result (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
           ") on this model, which is malformed in a way ONNX 1.12 does not check";
  }
  if (reply[0] == '1') return reply.substr(1);
  pb::GraphProto inferred;
  if (!inferred.ParseFromString(reply.substr(1))) return "its result could not be read back";
  *model.mutable_graph()->mutable_value_info() = inferred.value_info();
  *model.mutable_graph()->mutable_output() = inferred.output();
  return "";
}

}  // namespace placesim
