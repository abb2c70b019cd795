// bert: BERT pre-training (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional
// Transformers for Language Understanding"; the Hugging Face bert-large-uncased and
// bert-base-uncased configs), as Hugging Face's BertForPreTraining builds it: word + position +
// token-type embeddings and a layer norm, `layers` post-LN encoder blocks (bidirectional
// attention, GELU MLP), then both pre-training heads:
//   * the masked-LM head: a dense h -> h transform, GELU and layer norm, then the decoder to the
//     vocabulary, whose weights are the word embedding's (tied) and whose bias (V) is its own
//     (a BiasAdd here); logits for every position, as Hugging Face computes them, or, with
//     `masked_positions` P < sequence, for P positions per sequence only: NVIDIA's
//     DeepLearningExamples BERT (PyTorch, 21.11 container: `modeling.py` index_selects the rows
//     whose label is not -1 before the head, "dense sequence output", on by default) runs the
//     transform, the decoder and the loss on the masked tokens only (15% of a sequence: 19 of
//     128 in pre-training's phase 1, LDDL's round(0.15 x tokens)); the gather is a slice here;
//   * the next-sentence head: the pooler (dense h -> h and tanh on the [CLS] token) and a
//     2-way classifier.
// `dropout: true` adds the dropouts BERT trains with (hidden_dropout_prob and
// attention_probs_dropout_prob 0.1 in both configs; Hugging Face's and NVIDIA's BertEmbeddings,
// BertSelfAttention, BertSelfOutput and BertOutput): after the embeddings' layer norm, on the
// attention probabilities, and on each block's attention and MLP outputs before their residual
// adds; off by default, as in the `gpt` zoo.
// `bert_large` and `bert_base` differ only in their defaults:
//
//   large: 24 layers, hidden 1024, 16 heads, FFN 4096; base: 12, 768, 12, 3072;
//   both: vocabulary 30522, 512 positions (and 512-token sequences), 2 token types.
//
// Parameters (L layers, hidden h, FFN f, vocabulary V, P positions, 2 token types):
//   embeddings = (V + P + 2) h + 2h (layer norm)
//   per block  = QKV 3h^2 + 3h + output h^2 + h + MLP 2hf + f + h + 2 layer norms 4h
//              = 4h^2 + 2hf + 9h + f
//   pooler     = h^2 + h;  MLM head = transform h^2 + h + layer norm 2h + decoder bias V;
//   NSP        = 2h + 2
//   large: 31,782,912 + 24 x 12,596,224 + 1,049,600 + 1,082,170 + 2,050 = 336,226,108
//   base:  23,837,184 + 12 x 7,087,872  +   590,592 +   622,650 + 1,538 = 110,106,428
// Without the two heads (Hugging Face's BertModel, pooler included) these are 335,141,888 and
// 109,482,240: Devlin et al. (section 3, "Model Architecture") round them to "340M" and "110M".
// Op names follow the `gpt` zoo's (qkv, attn_proj, mlp_fc, mlp_proj, embedding/wte,
// lm_head/MatMul), so the default tensor-parallel split applies (docs/tensor-parallel.md).
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/transformer_parameters.h"

namespace placesim {

namespace {
constexpr int64_t kTokenTypes = 2;  // type_vocab_size of the Hugging Face BERT configs
}  // namespace

OpGraph build_bert(const BertDefaults& defaults, const JsonReader& parameters, int64_t batch_size,
                   double dtype_bytes) {
  parameters.reject_unknown_keys(
      {"layers", "hidden", "heads", "ffn", "sequence", "positions", "vocabulary", "masked_positions", "dropout"});
  // max_position_embeddings of the Hugging Face BERT configs; pre-training's phase 2 uses all 512.
  constexpr int64_t kPositions = 512;
  const auto [layers, hidden, heads, sequence, vocabulary] =
      read_transformer_shape(parameters, {.layers = defaults.layers, .hidden = defaults.hidden, .heads = defaults.heads,
                                          .sequence = kPositions, .vocabulary = 30522});  // HF vocab_size
  const int64_t ffn = parameters.integer_or("ffn", defaults.ffn, 1, kMaxTransformerHidden);
  const int64_t positions = parameters.integer_or("positions", kPositions, 1, kMaxTransformerHidden);
  if (sequence > positions) {
    parameters.at("sequence").fail(std::to_string(sequence) + " tokens do not fit the " + std::to_string(positions) +
                                   " position embeddings (\"positions\")");
  }
  const int64_t masked = parameters.integer_or("masked_positions", sequence, 1, sequence);
  const bool dropout = parameters.bool_or("dropout", false);

  OpGraph graph("bert");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  b.set_layer("input");
  Tensor tokens = b.input("token_ids", {sequence}, 4);
  Tensor position_ids = b.input("position_ids", {sequence}, 4);
  Tensor token_types = b.input("token_type_ids", {sequence}, 4);
  Tensor mlm_labels = b.input("mlm_labels", {masked}, 4);
  Tensor nsp_labels = b.input("nsp_labels", {}, 4);

  b.set_layer("embedding");
  Tensor x = b.add("add", b.embedding("wte", tokens, vocabulary, hidden), b.embedding("wpe", position_ids, positions, hidden));
  x = b.add("add_1", x, b.embedding("wtt", token_types, kTokenTypes, hidden));
  x = b.layer_norm("LayerNorm", x);
  if (dropout) x = b.dropout("dropout", x);

  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("layer." + std::to_string(layer));
    Tensor qkv = b.dense("qkv", x, 3 * hidden);
    Tensor probs = b.softmax("softmax", b.attention_scores("scores", qkv, heads));
    if (dropout) probs = b.dropout("attn_dropout", probs);
    Tensor context = b.attention_context("context", probs, qkv, heads);
    Tensor attention = b.dense("attn_proj", context, hidden);
    if (dropout) attention = b.dropout("attn_proj_dropout", attention);
    x = b.layer_norm("ln_1", b.add("add_1", x, attention));
    Tensor mlp_out = b.dense("mlp_proj", b.gelu("gelu", b.dense("mlp_fc", x, ffn)), hidden);
    if (dropout) mlp_out = b.dropout("mlp_dropout", mlp_out);
    x = b.layer_norm("ln_2", b.add("add_2", x, mlp_out));
  }

  b.set_layer("pooler");
  Tensor pooled = b.activation("tanh", b.dense("dense", b.slice("cls", x, 1, 0, 1, /*squeeze=*/true), hidden),
                               Activation::kTanh);
  b.set_layer("nsp");
  Tensor nsp_logits = b.dense("classifier", pooled, 2);
  b.softmax_cross_entropy("xent", nsp_logits, nsp_labels);

  b.set_layer("mlm");
  const Tensor predicted = masked < sequence ? b.slice("masked", x, 1, 0, masked, /*squeeze=*/false) : x;
  Tensor transformed = b.layer_norm("LayerNorm", b.gelu("gelu", b.dense("transform", predicted, hidden)));
  b.set_layer("lm_head");
  Tensor logits = b.bias_add("bias", b.dense("MatMul", transformed, vocabulary, /*bias=*/false, /*tied=*/true));
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, mlm_labels);
  return graph;
}

}  // namespace placesim
