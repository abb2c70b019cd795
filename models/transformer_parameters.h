// TransformerShape: the parameters every transformer of the zoo takes ("layers", "hidden", "heads",
// "sequence", "vocabulary"; encoder-decoders read "source_sequence" and "target_sequence" instead of
// "sequence"), read and checked in one place so that the models agree on names, limits and the
// heads-divide-hidden rule.
#pragma once

#include <cstdint>
#include <string>

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
/// An InputError at /heads when the hidden size is not a multiple of the heads (at /hidden when
/// "heads" is absent and the default heads do not divide the given hidden size).
TransformerShape read_transformer_shape(const JsonReader& parameters, const TransformerShape& defaults);

/// "attention": "fused" (one FlashAttention kernel per attention) or "unfused" (the default:
/// scores, softmax and context ops): true for fused.
bool read_fused_attention(const JsonReader& parameters);

/// Reads a sequence length `key` (tokens per sample; `fallback` when absent) with the limits of "sequence".
int64_t read_sequence_length(const JsonReader& parameters, const std::string& key, int64_t fallback);

}  // namespace placesim
