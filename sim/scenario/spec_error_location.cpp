#include "sim/scenario/spec_error_location.h"

#include <string>

namespace placesim {

InputError locate_spec_error(const Scenario& scenario, const Strategy& strategy, const SpecError& error) {
  const std::string file = scenario.file.string();
  switch (error.scope()) {
    case SpecError::Scope::kRun:
      return InputError(file, "/" + error.option(), error.message());
    case SpecError::Scope::kOpDevice:
      return InputError(scenario.graph_file.empty() ? file : scenario.graph_file,
                        scenario.graph_ops_path + "/" + std::to_string(error.op()) + "/device", error.message());
    case SpecError::Scope::kStrategy:
      break;
  }
  auto source = scenario.strategy_sources.find(strategy.name);
  if (source == scenario.strategy_sources.end()) {
    return InputError(file, "/strategy" + (error.option().empty() ? std::string() : "/" + error.option()), error.message());
  }
  auto given = source->second.option_paths.find(error.option());
  if (given != source->second.option_paths.end()) return InputError(file, given->second, error.message());
  return InputError(file, source->second.json_path + (error.option().empty() ? std::string() : "/" + error.option()),
                    error.message());
}

}  // namespace placesim
