// t5_base: the original T5 base (Raffel et al. 2020, "Exploring the Limits of Transfer Learning
// with a Unified Text-to-Text Transformer", JMLR 21; T5 v1.0, the Hugging Face t5-base config)
// pre-training on span corruption: an encoder and a decoder of `layers` pre-norm blocks each,
// with T5's layer norm (an RMS scale, no bias and no mean: RMSNorm), no biases in any dense
// layer, a ReLU MLP (feed_forward_proj "relu"), a relative position bias (32 buckets,
// relative_attention_num_buckets) computed by the first self-attention layer of each stack and
// added to every self-attention's scores, a final norm per stack, and one embedding shared by
// the encoder, the decoder and the output projection (tie_word_embeddings; the d_model^-0.5
// rescale before it is elementwise, not costed). Dropout is not modelled.
//
//   12 + 12 layers, d_model 768, 12 heads (d_kv 64), d_ff 3072, vocabulary 32128;
//   source_sequence 512 (Raffel et al. section 3.1.2: "a maximum sequence length of 512");
//   target_sequence 114 (the span-corruption targets of 512 inputs at 15% noise with a mean span
//   of 3 tokens: t5.data.preprocessors.random_spans_helper).
//
// Parameters (L layers per stack, d_model h, heads a, FFN f, vocabulary V, 32 buckets):
//   encoder block = Q, K, V, O 4h^2 + MLP 2hf + 2 norms 2h
//   decoder block = self and cross attention 8h^2 + MLP 2hf + 3 norms 3h
//   total = V h + L (4h^2 + 2hf + 2h) + L (8h^2 + 2hf + 3h) + 2 x 32 a (bias tables) + 2h (final norms)
//   base: 24,674,304 + 12 x 7,079,424 + 12 x 9,439,488 + 768 + 1,536 = 222,903,552,
//   the Hugging Face t5-base checkpoint's count; Raffel et al. (section 3.1.1) round it to "220 million".
// Op names follow the `transformer` zoo's (qkv, attn_proj, mlp_fc, mlp_proj, cross_q/k/v,
// cross_proj, embedding/wte, decoder_embedding/wte, lm_head/MatMul) for the tensor-parallel split.
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/transformer_parameters.h"

namespace placesim {

namespace {
constexpr int64_t kRelativeAttentionBuckets = 32;  // relative_attention_num_buckets, Hugging Face t5-base

/// A pre-norm self-attention sublayer with the relative position bias (its table held by the
/// stack's first layer): x + attn_proj(attention(qkv(ln_1(x)))).
Tensor pre_norm_self_attention(LayerBuilder& b, const Tensor& x, int64_t hidden, int64_t heads, bool owns_bias_table) {
  Tensor qkv = b.dense("qkv", b.rms_norm("ln_1", x), 3 * hidden, /*bias=*/false);
  Tensor scores = b.relative_position_bias("position_bias", b.attention_scores("scores", qkv, heads),
                                           kRelativeAttentionBuckets, owns_bias_table);
  Tensor context = b.attention_context("context", b.softmax("softmax", scores), qkv, heads);
  return b.add("add_1", x, b.dense("attn_proj", context, hidden, /*bias=*/false));
}

/// A pre-norm ReLU MLP sublayer, its norm and residual add numbered `index`.
Tensor pre_norm_relu_mlp(LayerBuilder& b, const Tensor& x, int64_t ffn, int64_t hidden, const std::string& index) {
  Tensor mlp = b.relu("relu", b.dense("mlp_fc", b.rms_norm("ln_" + index, x), ffn, /*bias=*/false));
  return b.add("add_" + index, x, b.dense("mlp_proj", mlp, hidden, /*bias=*/false));
}

}  // namespace

OpGraph build_t5(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys(
      {"layers", "hidden", "heads", "ffn", "vocabulary", "source_sequence", "target_sequence"});
  // Hugging Face t5-base: num_layers 12, d_model 768, num_heads 12, vocab_size 32128 ("sequence"
  // is rejected above; its default here is unused).
  const auto [layers, hidden, heads, unused_sequence, vocabulary] = read_transformer_shape(
      parameters, {.layers = 12, .hidden = 768, .heads = 12, .sequence = 1, .vocabulary = 32128});
  const int64_t ffn = parameters.integer_or("ffn", 3072, 1, kMaxTransformerHidden);  // d_ff
  const int64_t source_sequence = read_sequence_length(parameters, "source_sequence", 512);
  const int64_t target_sequence = read_sequence_length(parameters, "target_sequence", 114);

  OpGraph graph("t5");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  const auto [source, target, labels] = b.sequence_pair_inputs(source_sequence, target_sequence);

  b.set_layer("embedding");
  Tensor x = b.embedding("wte", source, vocabulary, hidden);
  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("enc." + std::to_string(layer));
    x = pre_norm_self_attention(b, x, hidden, heads, /*owns_bias_table=*/layer == 0);
    x = pre_norm_relu_mlp(b, x, ffn, hidden, "2");
  }
  b.set_layer("enc.ln_f");
  const Tensor encoded = b.rms_norm("RMSNorm", x);

  b.set_layer("decoder_embedding");
  Tensor y = b.embedding("wte", target, vocabulary, hidden, /*tied=*/true);
  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("dec." + std::to_string(layer));
    // Causal self-attention: the scores are counted in full, as in the `gpt` zoo.
    y = pre_norm_self_attention(b, y, hidden, heads, /*owns_bias_table=*/layer == 0);
    // Cross-attention on the encoder's output (no position bias).
    Tensor query = b.dense("cross_q", b.rms_norm("ln_2", y), hidden, /*bias=*/false);
    Tensor key = b.dense("cross_k", encoded, hidden, /*bias=*/false);
    Tensor value = b.dense("cross_v", encoded, hidden, /*bias=*/false);
    Tensor cross_probs = b.softmax("cross_softmax", b.cross_attention_scores("cross_scores", query, key, heads));
    Tensor cross_context = b.cross_attention_context("cross_context", cross_probs, value, heads);
    y = b.add("add_2", y, b.dense("cross_proj", cross_context, hidden, /*bias=*/false));
    y = pre_norm_relu_mlp(b, y, ffn, hidden, "3");
  }
  b.set_layer("dec.ln_f");
  y = b.rms_norm("RMSNorm", y);
  b.set_layer("lm_head");
  Tensor logits = b.dense("MatMul", y, vocabulary, /*bias=*/false, /*tied=*/true);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
