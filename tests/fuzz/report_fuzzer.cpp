// Fuzzes the run reports that `placesim compare PREDICTED MEASURED` reads (real_backend/compare.h):
// the document is both the prediction and the measurement, so every field is read on both sides
// and the two always describe the same plan.
#include "fuzz_support.h"
#include "real_backend/compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return placesim::fuzz::load_json(data, size, [](const placesim::JsonReader& document) {
    placesim::real::Comparison comparison =
        placesim::real::compare_reports(document.value(), "predicted.json", document.value(), "measured.json");
    placesim::real::comparison_text(comparison);
    placesim::real::comparison_json(comparison).dump();
    placesim::real::comparison_csv(comparison);
  });
}
