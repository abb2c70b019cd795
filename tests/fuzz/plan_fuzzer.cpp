// Fuzzes plan files (sim/plan/plan_json.h), read by `placesim simulate` and `placesim execute`.
#include "fuzz_support.h"
#include "sim/plan/plan_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    document.expect_object();
    placesim::read_plan_json(document);
  });
}
