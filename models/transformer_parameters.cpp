#include "models/transformer_parameters.h"

#include <string>

namespace placesim {

namespace {
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxSequence = 1 << 22;
constexpr int64_t kMaxVocabulary = 1 << 24;
}  // namespace

int64_t read_sequence_length(const JsonReader& parameters, const std::string& key, int64_t fallback) {
  return parameters.integer_or(key, fallback, 1, kMaxSequence);
}

TransformerShape read_transformer_shape(const JsonReader& parameters, const TransformerShape& defaults) {
  TransformerShape shape;
  shape.layers = parameters.integer_or("layers", defaults.layers, 1, kMaxLayers);
  shape.hidden = parameters.integer_or("hidden", defaults.hidden, 1, kMaxTransformerHidden);
  shape.heads = parameters.integer_or("heads", defaults.heads, 1, kMaxTransformerHidden);
  shape.sequence = read_sequence_length(parameters, "sequence", defaults.sequence);
  shape.vocabulary = parameters.integer_or("vocabulary", defaults.vocabulary, 1, kMaxVocabulary);
  if (shape.hidden % shape.heads != 0) {
    // Blame the key the user gave: "heads" when present, else the "hidden" the default heads miss.
    parameters.at(parameters.has("heads") ? "heads" : "hidden").fail("the hidden size " + std::to_string(shape.hidden) + " is not divisible by " +
                                std::to_string(shape.heads) + " heads");
  }
  return shape;
}

bool read_fused_attention(const JsonReader& parameters) {
  return parameters.choice_or("attention", {"unfused", "fused"}, "unfused") == "fused";
}

}  // namespace placesim
