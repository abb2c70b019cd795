// `placesim inspect MODEL`: a per-layer summary of a model graph (FLOPs, parameters, activation
// bytes) with totals, as model-summary tools print, for zoo models, model files and ONNX files.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/command.h"
#include "cli/model_source.h"
#include "sim/core/units_format.h"

namespace placesim {
namespace {

struct Row {
  std::string name;
  std::string type;
  std::vector<int64_t> shape;
  size_t ops = 0;
  double parameters = 0;
  double forward_flops = 0;
  double activation_bytes = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// 25557032 -> "25,557,032".
std::string grouped(double value) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(value)));
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') text += ',';
    text += digits[i];
  }
  return text;
}

std::string flops_text(double flops, const char* unit_name = "FLOPs") {
  const char* units[] = {"", "K", "M", "G", "T", "P", "E"};
  int unit = 0;
  while (std::fabs(flops) >= 1000 && unit < 6) {
    flops /= 1000;
    ++unit;
  }
  std::ostringstream text;
  text << std::fixed << std::setprecision(unit == 0 ? 0 : 2) << flops << " " << units[unit] << unit_name;
  return text.str();
}

// One row per layer (ops in layer order of first appearance), or per op with `by_op`.
std::vector<Row> rows_of(const OpGraph& graph, bool by_op) {
  std::vector<Row> rows;
  std::map<std::string, size_t> row_of_layer;
  for (OpId id = 0; id < graph.size(); ++id) {
    const Op& op = graph.op(id);
    std::string key = by_op || op.layer.empty() ? op.name : op.layer;
    auto [it, inserted] = row_of_layer.emplace(by_op ? "\x01" + op.name : key, rows.size());
    if (inserted) rows.push_back(Row{key, op.type, {}, 0, 0, 0, 0});
    Row& row = rows[it->second];
    ++row.ops;
    if (row.ops > 1) row.type = std::to_string(row.ops) + " ops";
    row.shape = op.output_shape;
    row.parameters += op.parameter_count;
    row.forward_flops += op.forward_flops;
    row.activation_bytes += op.output_bytes;
  }
  return rows;
}

void print_table(const OpGraph& graph, bool by_op, std::ostream& out) {
  std::vector<Row> rows = rows_of(graph, by_op);
  size_t name_width = by_op ? 2 : 5, type_width = 4, shape_width = 12;
  for (const Row& row : rows) {
    name_width = std::max(name_width, std::min<size_t>(row.name.size(), 48));
    type_width = std::max(type_width, row.type.size());
    shape_width = std::max(shape_width, shape_text(row.shape).size());
  }
  auto line = [&](const std::string& name, const std::string& type, const std::string& shape, const std::string& params,
                  const std::string& flops, const std::string& activations) {
    out << std::left << std::setw(static_cast<int>(name_width)) << name << "  " << std::setw(static_cast<int>(type_width))
        << type << "  " << std::setw(static_cast<int>(shape_width)) << shape << "  " << std::right << std::setw(14)
        << params << "  " << std::setw(16) << flops << "  " << std::setw(12) << activations << "\n";
  };
  line(by_op ? "op" : "layer", "type", "output shape", "parameters", "forward", "activations");
  out << std::string(name_width + type_width + shape_width + 14 + 16 + 12 + 10, '-') << "\n";
  for (const Row& row : rows) {
    std::string name = row.name.size() > 48 ? "..." + row.name.substr(row.name.size() - 45) : row.name;
    line(name, row.type, shape_text(row.shape), grouped(row.parameters), flops_text(row.forward_flops),
         format_bytes(row.activation_bytes));
  }
  GraphTotals totals = graph.totals();
  double parameter_bytes = 0, gemm_flops = 0;
  for (OpId id = 0; id < graph.size(); ++id) {
    parameter_bytes += graph.op(id).parameter_bytes();
    if (is_gemm_kind(graph.op(id).kind)) gemm_flops += graph.op(id).forward_flops;
  }
  out << std::string(name_width + type_width + shape_width + 14 + 16 + 12 + 10, '-') << "\n";
  line("total (" + std::to_string(totals.ops) + " ops)", "", "", grouped(totals.parameter_count),
       flops_text(totals.forward_flops), format_bytes(totals.activation_bytes));
  out << "\nParameters: " << grouped(totals.parameter_count) << " (" << format_bytes(parameter_bytes) << ")\n"
      << "Forward: " << flops_text(totals.forward_flops) << " (" << flops_text(gemm_flops / 2, "MACs")
      << " in convolutions and matrix multiplies)\n"
      << "Backward: " << flops_text(totals.backward_flops) << "\n"
      << "Activations (sum of op outputs): " << format_bytes(totals.activation_bytes) << "\n";
}

}  // namespace

Command add_inspect_command(CLI::App& app, const GlobalOptions& global) {
  struct Options {
    std::string model;
    ModelSourceOptions source;
    bool by_op = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* command = app.add_subcommand(
      "inspect", "Print a model's layers with FLOPs, parameters and activation bytes, and the totals");
  command->add_option("model", options->model,
                      "A zoo model name, a scenario or model graph JSON file, or an ONNX file")
      ->required();
  add_model_source_options(command, &options->source);
  command->add_flag("--ops", options->by_op, "One row per op instead of per layer");
  return {command, [options, &global] {
            OpGraph graph = load_model_source(options->model, options->source, global.catalog());
            std::cout << "Model: " << graph.name() << " (" << graph.size() << " ops)\n\n";
            print_table(graph, options->by_op, std::cout);
            return 0;
          }};
}

}  // namespace placesim
