// Reading and writing model graphs in placesim's JSON model format (docs/scenario-format.md,
// "Model graph files"). Loading validates every field and the graph's acyclicity.
#pragma once

#include <filesystem>

#include "sim/core/json_reader.h"
#include "sim/graph/op_graph.h"

namespace placesim {

/// Builds a graph from a model JSON object; throws InputError with the JSON path of the problem.
OpGraph read_model_json(const JsonReader& model);
/// Loads a model graph file.
OpGraph load_model_file(const std::filesystem::path& path);
/// Serializes a graph in the same format (read_model_json(write_model_json(g)) == g).
Json write_model_json(const OpGraph& graph);
/// Throws InputError naming the ops on a cycle, if the graph has one.
void require_acyclic(const OpGraph& graph, const std::string& file, const std::string& json_path);

}  // namespace placesim
