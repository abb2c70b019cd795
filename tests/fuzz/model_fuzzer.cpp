// Fuzzes model graph files (sim/graph/model_json.h).
#include "fuzz_support.h"
#include "sim/graph/model_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    document.expect_object();
    placesim::read_model_json(document);
  });
}
