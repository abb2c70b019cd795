#include "models/llama_layers.h"

#include <string>

namespace placesim {

LlamaShape read_llama_shape(const JsonReader& parameters, const LlamaShape& defaults) {
  LlamaShape shape;
  shape.transformer = read_transformer_shape(parameters, defaults.transformer);
  shape.kv_heads = parameters.integer_or("kv_heads", defaults.kv_heads, 1, kMaxTransformerHidden);
  shape.ffn = parameters.integer_or("ffn", defaults.ffn, 1, kMaxTransformerHidden);
  if (shape.transformer.heads % shape.kv_heads != 0) {
    parameters.at("kv_heads").fail(std::to_string(shape.transformer.heads) + " heads are not a multiple of " +
                                   std::to_string(shape.kv_heads) + " key/value heads");
  }
  shape.fused_attention = read_fused_attention(parameters);
  return shape;
}

DecoderInputs llama_inputs(LayerBuilder& b, const LlamaShape& shape) {
  b.set_layer("input");
  Tensor tokens = b.input("token_ids", {shape.transformer.sequence}, 4);
  Tensor labels = b.input("labels", {shape.transformer.sequence}, 4);
  b.set_layer("embedding");
  return {b.embedding("wte", tokens, shape.transformer.vocabulary, shape.transformer.hidden), labels};
}

Tensor llama_attention(LayerBuilder& b, const Tensor& x, const LlamaShape& shape) {
  const int64_t hidden = shape.transformer.hidden, heads = shape.transformer.heads;
  const int64_t head_dim = hidden / heads;
  Tensor qkv = b.dense("qkv", b.rms_norm("ln_1", x), hidden + 2 * shape.kv_heads * head_dim, /*bias=*/false);
  Tensor context = b.core_attention(qkv, heads, shape.kv_heads, shape.fused_attention);
  return b.add("add_1", x, b.dense("attn_proj", context, hidden, /*bias=*/false));
}

void llama_head(LayerBuilder& b, const Tensor& x, const LlamaShape& shape, const Tensor& labels) {
  b.set_layer("ln_f");
  Tensor normed = b.rms_norm("RMSNorm", x);
  b.set_layer("lm_head");
  Tensor logits = b.dense("MatMul", normed, shape.transformer.vocabulary, /*bias=*/false);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
}

}  // namespace placesim
