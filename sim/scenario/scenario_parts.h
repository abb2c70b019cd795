// The steps of reading a scenario that a sweep's variations (scenario_variations.h) share with
// read_scenario: the run options, the model graph (built once per model, batch and precision
// when reused), the fetched ops, where an op's own "device" is written. Internal to the loader.
#pragma once

#include <filesystem>
#include <string>

#include "sim/core/json_reader.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_loader.h"

namespace placesim {

/// "run" and "simulation" of a scenario document.
RunOptions read_run_options(const JsonReader& document);

/// The graph the "model" section gives for the run's batch and precision.
OpGraph build_model_graph(const JsonReader& model, const RunOptions& run, const std::filesystem::path& base_directory,
                          ScenarioReuse* reuse);

/// Every op "run.fetch" names is in the graph (InputError at /run/fetch/i).
void require_fetched_ops_exist(const JsonReader& document, const Scenario& scenario);

/// Errors about an op's own "device" point into the inline graph or the model file.
void locate_graph_ops(const JsonReader& model, const std::filesystem::path& base_directory, Scenario* scenario);

}  // namespace placesim
