// Fuzzes the hardware profile formats (sim/cluster/hardware_catalog.h): the document is read as a
// device profile (hardware_profiles/devices/*.json) and, independently, as a links table
// (hardware_profiles/links.json), the way `placesim check` reads either.
#include "fuzz_support.h"
#include "sim/cluster/hardware_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    document.expect_object();
    try {
      placesim::read_device_profile(document);
    } catch (const placesim::InputError&) {
    }
    for (const auto& type : document.keys()) placesim::read_link_spec(type, document.at(type));
  });
}
