// Scenarios written inline in tests, read as `placesim` reads a file (bundled hardware profiles).
#pragma once

#include <filesystem>
#include <string>

#include "sim/scenario/scenario_loader.h"

namespace placesim::testing {

inline Scenario scenario_from_json(const Json& document) {
  HardwareCatalog catalog(std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles");
  return read_scenario(JsonReader(document, "test.json"), catalog, PLACESIM_SOURCE_DIR);
}

inline Scenario scenario_from_text(const std::string& text) { return scenario_from_json(Json::parse(text)); }

}  // namespace placesim::testing
