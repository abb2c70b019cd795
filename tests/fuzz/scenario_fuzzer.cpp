// Fuzzes the scenario loader (sim/scenario/scenario_loader.h) with the bundled hardware profiles.
// Relative file references resolve against scenarios/, so seeds that name model or cluster files
// there still load.
#include "fuzz_support.h"
#include "sim/scenario/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placesim::HardwareCatalog catalog(placesim::fuzz::profiles_root());
  static const std::filesystem::path base = std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios";
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    document.expect_object();
    placesim::read_scenario(document, catalog, base);
  });
}
