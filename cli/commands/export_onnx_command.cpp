// `placesim export-onnx MODEL -o model.onnx`: write a model graph as a weight-free ONNX model
// that opens in Netron and imports back to the same totals (docs/onnx.md).
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/model_source.h"
#include "sim/core/atomic_file.h"
#include "sim/graph/onnx/onnx_model.h"

namespace placesim {

Command add_export_onnx_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string model;
    std::string output;
    ModelSourceOptions source;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand("export-onnx", "Write a model graph as an ONNX file without weights");
  command->add_option("model", options->model,
                      "A zoo model name (with --batch, --precision, --parameters), a scenario or model graph JSON "
                      "file, or an ONNX file")
      ->required();
  command->add_option("-o,--output", options->output, "ONNX file to write")->required();
  add_model_source_options(command, &options->source);
  return {command, [options, &global] {
            output_path(options->output, "--output", "", "", "");
            OpGraph graph = load_model_source(options->model, options->source, global.catalog());
            std::string bytes = export_onnx_model(graph);
            write_file_atomically(options->output, bytes);
            std::cerr << "placesim: wrote " << graph.name() << " (" << graph.size() << " ops, " << bytes.size()
                      << " bytes, no weights) to " << options->output << "\n";
            return 0;
          }};
}

}  // namespace placesim
