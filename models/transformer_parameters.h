// TransformerShape: the parameters every decoder of the zoo takes ("layers", "hidden", "heads",
// "sequence", "vocabulary"), read and checked in one place so that `gpt` and the Llama models
// agree on names, limits and the heads-divide-hidden rule.
#pragma once

#include <cstdint>

#include "sim/core/json_reader.h"

namespace placesim {

struct TransformerShape {
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t sequence = 0;    ///< tokens per sample
  int64_t vocabulary = 0;
};

/// Largest accepted hidden size (also bounds head and FFN counts): keeps weights far from overflow.
constexpr int64_t kMaxTransformerHidden = 1 << 20;

/// Reads the five keys (each absent one takes `defaults`' value); the caller rejects unknown keys.
/// An InputError at /heads when the hidden size is not a multiple of the heads.
TransformerShape read_transformer_shape(const JsonReader& parameters, const TransformerShape& defaults);

}  // namespace placesim
