// transformer: the encoder-decoder Transformer of Vaswani et al. 2017, "Attention Is All You
// Need" (table 3, base and big), trained on translation pairs: `layers` post-LN encoder blocks
// (self-attention, ReLU MLP) and `layers` post-LN decoder blocks (masked self-attention,
// cross-attention on the encoder's output, ReLU MLP), with one embedding shared by the source,
// the target and the pre-softmax projection (section 3.4; a 37,000-token shared BPE vocabulary
// for WMT English-German, section 5.1). The sinusoidal position encodings have no parameters;
// adding them (and the sqrt(d_model) scale) is elementwise and not costed. Dropout (P_drop) is
// not modelled, as in the `gpt` zoo. `transformer_base` and `transformer_big` differ only in
// their defaults:
//
//   base: 6 + 6 layers, d_model 512, 8 heads, FFN 2048;  big: 6 + 6, 1024, 16 heads, FFN 4096
//   both: vocabulary 37000; source_sequence and target_sequence 128 tokens each (a planning
//   choice, not the paper's: it batches sentence pairs by length, ~25,000 tokens a side).
//
// Parameters (L layers per stack, d_model h, FFN f, vocabulary V):
//   attention  = Q, K, V and output projections with biases = 4h^2 + 4h
//   MLP        = 2hf + f + h;  layer norm = 2h
//   encoder block = attention + MLP + 2 layer norms;  decoder block = 2 attentions + MLP + 3 norms
//   total = V h + L (4h^2 + 4h + 2hf + f + h + 4h) + L (8h^2 + 8h + 2hf + f + h + 6h)
//   base: 18,944,000 + 6 x 3,152,384 + 6 x 4,204,032 = 63,082,496   (paper: 65M)
//   big:  37,888,000 + 6 x 12,596,224 + 6 x 16,796,672 = 214,245,376 (paper: 213M)
// Op names follow the `gpt` zoo's for self-attention and the MLP (qkv, attn_proj, mlp_fc,
// mlp_proj, embedding/wte, lm_head/MatMul); the cross-attention's are cross_q, cross_k, cross_v
// (column-parallel) and cross_proj (row-parallel), and the decoder's lookup in the shared table is
// decoder_embedding/wte, so the default tensor-parallel split applies (docs/tensor-parallel.md).
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/transformer_parameters.h"

namespace placesim {
namespace {

/// A post-LN self-attention sublayer: ln_1(x + attn_proj(attention(qkv(x)))).
Tensor post_ln_self_attention(LayerBuilder& b, const Tensor& x, int64_t hidden, int64_t heads) {
  Tensor qkv = b.dense("qkv", x, 3 * hidden);
  Tensor probs = b.softmax("softmax", b.attention_scores("scores", qkv, heads));
  Tensor context = b.attention_context("context", probs, qkv, heads);
  return b.layer_norm("ln_1", b.add("add_1", x, b.dense("attn_proj", context, hidden)));
}

/// A post-LN ReLU MLP sublayer, its residual add and norm numbered `index`.
Tensor post_ln_relu_mlp(LayerBuilder& b, const Tensor& x, int64_t ffn, int64_t hidden, const std::string& index) {
  Tensor mlp = b.relu("relu", b.dense("mlp_fc", x, ffn));
  return b.layer_norm("ln_" + index, b.add("add_" + index, x, b.dense("mlp_proj", mlp, hidden)));
}

}  // namespace

OpGraph build_transformer(const TransformerDefaults& defaults, const JsonReader& parameters, int64_t batch_size,
                          double dtype_bytes) {
  parameters.reject_unknown_keys(
      {"layers", "hidden", "heads", "ffn", "vocabulary", "source_sequence", "target_sequence"});
  // "sequence" is rejected above; its default here is unused.
  const auto [layers, hidden, heads, unused_sequence, vocabulary] =
      read_transformer_shape(parameters, {.layers = 6, .hidden = defaults.hidden, .heads = defaults.heads,
                                          .sequence = 1, .vocabulary = 37000});  // section 5.1
  const int64_t ffn = parameters.integer_or("ffn", defaults.ffn, 1, kMaxTransformerHidden);
  const int64_t source_sequence = read_sequence_length(parameters, "source_sequence", 128);
  const int64_t target_sequence = read_sequence_length(parameters, "target_sequence", 128);

  OpGraph graph("transformer");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  const auto [source, target, labels] = b.sequence_pair_inputs(source_sequence, target_sequence);

  b.set_layer("embedding");
  Tensor x = b.embedding("wte", source, vocabulary, hidden);
  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("enc." + std::to_string(layer));
    x = post_ln_relu_mlp(b, post_ln_self_attention(b, x, hidden, heads), ffn, hidden, "2");
  }
  const Tensor encoded = x;

  b.set_layer("decoder_embedding");
  Tensor y = b.embedding("wte", target, vocabulary, hidden, /*tied=*/true);
  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("dec." + std::to_string(layer));
    // Masked self-attention: the scores are counted in full, as in the `gpt` zoo.
    y = post_ln_self_attention(b, y, hidden, heads);
    // Cross-attention: queries from the decoder, keys and values from the encoder's output.
    Tensor query = b.dense("cross_q", y, hidden);
    Tensor key = b.dense("cross_k", encoded, hidden);
    Tensor value = b.dense("cross_v", encoded, hidden);
    Tensor cross_probs = b.softmax("cross_softmax", b.cross_attention_scores("cross_scores", query, key, heads));
    Tensor cross_context = b.cross_attention_context("cross_context", cross_probs, value, heads);
    y = b.layer_norm("ln_2", b.add("add_2", y, b.dense("cross_proj", cross_context, hidden)));
    y = post_ln_relu_mlp(b, y, ffn, hidden, "3");
  }
  b.set_layer("lm_head");
  Tensor logits = b.dense("MatMul", y, vocabulary, /*bias=*/false, /*tied=*/true);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
