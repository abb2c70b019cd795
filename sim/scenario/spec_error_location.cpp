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
  static const StrategySource kSingleStrategy{"/strategy", {}};  // one made by a command, not read
  const auto found = scenario.strategy_sources.find(strategy.name);
  const StrategySource& source = found == scenario.strategy_sources.end() ? kSingleStrategy : found->second;
  return InputError(file, source.path_of(error.option()), error.message());
}

}  // namespace placesim
