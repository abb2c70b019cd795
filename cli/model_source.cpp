#include "cli/model_source.h"

#include <iostream>

#include "models/zoo.h"
#include "sim/core/precision.h"
#include "sim/graph/model_json.h"
#include "sim/graph/onnx/onnx_model.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {
namespace {

constexpr int64_t kMaxDimension = int64_t{1} << 32;

bool has_extension(const std::string& text, const std::string& extension) {
  if (text.size() < extension.size()) return false;
  std::string tail = text.substr(text.size() - extension.size());
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == extension;
}

// "input=64,3,224,224" -> {"input", [64, 3, 224, 224]}.
void parse_input_shape(const std::string& text, std::map<std::string, std::vector<int64_t>>* shapes) {
  auto fail = [&](const std::string& why) {
    throw InputError("--input", "", "\"" + text + "\": " + why + " (expected NAME=D0,D1,..., e.g. input=64,3,224,224)");
  };
  size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) fail("no NAME=");
  std::vector<int64_t>& shape = (*shapes)[text.substr(0, equals)];
  std::string dims = text.substr(equals + 1);
  size_t start = 0;
  while (start <= dims.size() && !dims.empty()) {
    size_t comma = dims.find(',', start);
    std::string dim = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    char* end = nullptr;
    long long value = std::strtoll(dim.c_str(), &end, 10);
    if (dim.empty() || *end != '\0' || value < 1 || value > kMaxDimension) fail("bad dimension \"" + dim + "\"");
    shape.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

double precision_bytes(const std::string& text) {
  auto precision = parse_precision(text);
  if (!precision) {
    std::string names;
    for (const auto& name : precision_names()) names += (names.empty() ? "" : ", ") + name;
    throw InputError("--precision", "", "unknown precision \"" + text + "\" (choose from " + names + ")");
  }
  return element_bytes(*precision);
}

}  // namespace

void add_model_source_options(CLI::App* command, ModelSourceOptions* options) {
  command->add_option("--batch", options->batch, "Samples per step for zoo models (default 1) and ONNX inputs with a symbolic batch (default: the "
                      "batch an exported file records, else 1)")
      ->check(CLI::Range(int64_t{1}, kMaxDimension));
  command->add_option("--precision", options->precision, "fp32, tf32, fp16, bf16, fp8 or int8: the element size (default fp32; fp8 stores bf16 tensors, 2 bytes)");
  command->add_option("--parameters", options->parameters, "Zoo model parameters as a JSON object, e.g. '{\"layers\": 24}'");
  command->add_option("--input", options->inputs, "ONNX input shape NAME=D0,D1,... (repeat for several inputs)");
  command->add_flag("--strict", options->strict, "ONNX: refuse operators placesim cannot cost");
}

OpGraph load_model_source(const std::string& model, const ModelSourceOptions& options, const HardwareCatalog& catalog) {
  const double dtype_bytes = precision_bytes(options.precision);
  std::error_code error;
  const bool is_file = std::filesystem::is_regular_file(model, error);
  // Something is there but is not a regular file (a FIFO, a device, a link loop): say what it is.
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(model, error));
  if (exists && !is_file && !std::filesystem::is_directory(model, error)) read_input_file(model);
  if (!has_extension(model, ".onnx") && !options.inputs.empty()) {
    throw InputError("--input", "", "gives ONNX input shapes, but \"" + model +
                                        "\" is not an ONNX model (a zoo model takes --batch and --parameters)");
  }
  if (has_extension(model, ".onnx")) {
    if (!is_file) throw InputError(model, "", "no such file");
    OnnxImportOptions import;
    for (const auto& text : options.inputs) parse_input_shape(text, &import.input_shapes);
    import.input_shapes_file = "--input";
    import.default_batch = options.batch > 0 ? options.batch : 1;
    import.batch_from_metadata = options.batch == 0;
    import.dtype_bytes = dtype_bytes;
    import.strict = options.strict;
    import.warnings = &std::cerr;
    return import_onnx_model(model, import);
  }
  if (is_file) {
    Json document = parse_json_file(model);
    JsonReader reader(document, model);
    reader.expect_object();
    if (document.contains("ops")) return read_model_json(reader);
    return load_scenario(model, catalog).graph;
  }
  if (has_extension(model, ".json") || model.find('/') != std::string::npos) {
    throw InputError(model, "", "no such file");
  }
  Json parameters = options.parameters.empty() ? Json::object() : parse_json_text(options.parameters, "--parameters");
  JsonReader parameters_reader(parameters, "--parameters");
  parameters_reader.expect_object();
  Json name = model;
  return build_zoo_model(JsonReader(name, "MODEL"), parameters_reader, options.batch > 0 ? options.batch : 1, dtype_bytes);
}

}  // namespace placesim
