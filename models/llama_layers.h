// The pieces the zoo's Llama-style decoders share (llama3, mixtral): their parameters, the token
// inputs and embedding, the attention half of a block, and the untied head with its loss.
#pragma once

#include <cstdint>

#include "models/layer_builder.h"
#include "models/transformer_parameters.h"
#include "sim/core/json_reader.h"

namespace placesim {

/// A Llama-style decoder's shape: the transformer's five keys, "kv_heads", "ffn" and "attention".
struct LlamaShape {
  TransformerShape transformer;
  int64_t kv_heads = 0;
  int64_t ffn = 0;
  bool fused_attention = false;
};

/// Reads the keys above (absent ones take `defaults`); an InputError at /kv_heads when they do
/// not divide the heads. The caller rejects unknown keys.
LlamaShape read_llama_shape(const JsonReader& parameters, const LlamaShape& defaults);

struct DecoderInputs {
  Tensor embedded;  ///< the token embedding [N, S, hidden]
  Tensor labels;
};

/// "input" (token ids, labels) and "embedding" (an untied token embedding).
DecoderInputs llama_inputs(LayerBuilder& b, const LlamaShape& shape);

/// The attention half of a block on `x`, in the builder's current layer: RMSNorm `ln_1`, the fused
/// grouped-query projection `qkv`, the core attention (fused or not), `attn_proj` and the residual
/// `add_1`. Returns x + attention.
Tensor llama_attention(LayerBuilder& b, const Tensor& x, const LlamaShape& shape);

/// "ln_f" (RMSNorm), "lm_head" (an untied projection to the vocabulary) and "loss".
void llama_head(LayerBuilder& b, const Tensor& x, const LlamaShape& shape, const Tensor& labels);

}  // namespace placesim
