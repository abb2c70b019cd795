#include "models/transformer_parameters.h"

#include <string>

namespace placesim {

namespace {
constexpr int64_t kMaxLayers = 10000;
constexpr int64_t kMaxSequence = 1 << 22;
constexpr int64_t kMaxVocabulary = 1 << 24;
}  // namespace

TransformerShape read_transformer_shape(const JsonReader& parameters, const TransformerShape& defaults) {
  TransformerShape shape;
  shape.layers = parameters.integer_or("layers", defaults.layers, 1, kMaxLayers);
  shape.hidden = parameters.integer_or("hidden", defaults.hidden, 1, kMaxTransformerHidden);
  shape.heads = parameters.integer_or("heads", defaults.heads, 1, kMaxTransformerHidden);
  shape.sequence = parameters.integer_or("sequence", defaults.sequence, 1, kMaxSequence);
  shape.vocabulary = parameters.integer_or("vocabulary", defaults.vocabulary, 1, kMaxVocabulary);
  if (shape.hidden % shape.heads != 0) {
    parameters.at("heads").fail("the hidden size " + std::to_string(shape.hidden) + " is not divisible by " +
                                std::to_string(shape.heads) + " heads");
  }
  return shape;
}

}  // namespace placesim
