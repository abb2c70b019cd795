// Shared by the libFuzzer targets (docs/reliability.md): each target turns the fuzzer's bytes into
// JSON and hands it to one loader. InputError is the promised outcome for bad input; any other
// exception escapes LLVMFuzzerTestOneInput, std::terminate aborts, and libFuzzer reports a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "sim/core/input_error.h"
#include "sim/core/json_reader.h"

namespace placesim::fuzz {

/// The label the loaders put in their messages; no file of that name exists.
inline const std::string kFile = "fuzz.json";

/// Parses the bytes as a JSON file would be parsed, then runs `load` on the document.
template <typename Load>
int load_json(const uint8_t* data, size_t size, Load load) {
  try {
    Json document = parse_json_text(std::string(reinterpret_cast<const char*>(data), size), kFile);
    load(JsonReader(document, kFile));
  } catch (const InputError&) {
  }
  return 0;
}

/// The bundled hardware profiles (hardware_profiles/ of the source tree).
inline std::filesystem::path profiles_root() {
  return std::filesystem::path(PLACESIM_SOURCE_DIR) / "hardware_profiles";
}

}  // namespace placesim::fuzz
