// llama3: Llama 3 decoder-only transformers (Grattafiori et al. 2024, "The Llama 3 Herd of
// Models", table 3; the Hugging Face Meta-Llama-3 configs): RMSNorm pre-norm blocks, grouped-query
// attention (RoPE rotates Q and K: elementwise, not costed), a SwiGLU MLP, untied input
// embedding and output head, no biases. `llama3_8b` and `llama3_70b` differ only in their
// defaults:
//
//   8B:  32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 14336, vocabulary 128256, 8192 tokens
//   70B: 80 layers, hidden 8192, 64 heads, 8 KV heads, FFN 28672, vocabulary 128256, 8192 tokens
//
// Parameters (L layers, hidden h, head dim d = h / heads, K KV heads, FFN f, vocabulary V):
//   per block: 2 RMSNorms 2h + Q h^2 + K, V 2 h K d + O h^2 + MLP 3 h f
//   total = L (2h + 2h^2 + 2hKd + 3hf) + 2 V h + h (final norm)
//   8B: 32 x 218,112,000 + 2 x 525,336,576 + 4096 = 8,030,261,248
//   70B: 80 x 855,654,400 + 2 x 1,050,673,152 + 8192 = 70,553,706,496
// `attention: "fused"` runs each core attention as one causal FlashAttention kernel (as `gpt`).
// Op names follow the `gpt` zoo's (qkv, attn_proj, mlp_fc, mlp_proj, embedding/wte,
// lm_head/MatMul), so the default tensor-parallel split applies (docs/tensor-parallel.md).
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/llama_layers.h"

namespace placesim {

OpGraph build_llama3(const Llama3Defaults& defaults, const JsonReader& parameters, int64_t batch_size,
                     double dtype_bytes) {
  parameters.reject_unknown_keys({"layers", "hidden", "heads", "kv_heads", "ffn", "sequence", "vocabulary", "attention"});
  const LlamaShape shape = read_llama_shape(
      parameters, {.transformer = {.layers = defaults.layers, .hidden = defaults.hidden, .heads = defaults.heads,
                                   .sequence = defaults.sequence, .vocabulary = defaults.vocabulary},
                   .kv_heads = defaults.kv_heads,
                   .ffn = defaults.ffn});
  const int64_t hidden = shape.transformer.hidden;

  OpGraph graph("llama3");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  auto [x, labels] = llama_inputs(b, shape);
  for (int64_t layer = 0; layer < shape.transformer.layers; ++layer) {
    b.set_layer("h." + std::to_string(layer));
    x = llama_attention(b, x, shape);
    Tensor gate_and_up = b.dense("mlp_fc", b.rms_norm("ln_2", x), 2 * shape.ffn, /*bias=*/false);
    x = b.add("add_2", x, b.dense("mlp_proj", b.swiglu("swiglu", gate_and_up), hidden, /*bias=*/false));
  }
  llama_head(b, x, shape, labels);
  return graph;
}

}  // namespace placesim
