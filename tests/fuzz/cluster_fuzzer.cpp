// Fuzzes both cluster formats (sim/cluster): a cluster description as in a scenario or a cluster
// file (cluster_builder.h, with the bundled profiles) and, independently, the resolved cluster that
// plan files embed (cluster_json.h).
#include "fuzz_support.h"
#include "sim/cluster/cluster_builder.h"
#include "sim/cluster/cluster_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const placesim::HardwareCatalog catalog(placesim::fuzz::profiles_root());
  static const std::filesystem::path base = std::filesystem::path(PLACESIM_SOURCE_DIR) / "scenarios";
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    document.expect_object();
    try {
      placesim::build_cluster(document, catalog, base);
    } catch (const placesim::InputError&) {
    }
    placesim::read_cluster_json(document);
  });
}
