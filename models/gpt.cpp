// gpt: a GPT-2-style decoder-only transformer (Radford et al., "Language Models are Unsupervised
// Multitask Learners", 2019): token + position embeddings, `layers` pre-norm blocks, a final
// layer norm and output logits tied to the token embedding. Defaults are GPT-2 small (12 layers,
// hidden 768, 12 heads, 1024 tokens, 50257-token vocabulary: 124,439,808 parameters).
//
// Per block: ln_1, fused QKV projection (h -> 3h), scores Q K^T, softmax, context, output
// projection (h -> h), residual add, ln_2, MLP (h -> 4h, GELU, 4h -> h), residual add.
// Parameters (L layers, hidden h, vocabulary V, sequence S):
//   per block: 2 layer norms 4h + QKV 3h^2 + 3h + projection h^2 + h + MLP 8h^2 + 5h = 12h^2 + 13h
//   total = 12 L h^2 + 13 L h + (V + S) h + 2h   (the 2h is the final layer norm; the logits reuse
//   the token embedding, so they add no parameters).
// Forward GEMM FLOPs per step of B sequences: 24 B S L h^2 (1 + S / (6h)) + 2 B S h V, i.e. the
// forward third of Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM" (SC'21), 72 B S L h^2 (1 + S/(6h) + V/(12 h L)) without recompute.
// The scores and context are counted in full (no causal-mask saving), as that formula does.
// `attention: "fused"` runs each core attention as one FlashAttention kernel with a causal mask
// (LayerBuilder::fused_attention) instead of the scores, softmax (dropout) and context ops that
// write the [S, S] scores to memory ("unfused", the default, as Megatron-LM ran before 2022).
// `dropout: true` adds Megatron's dropouts (Shoeybi et al. 2019): on the embeddings' sum, on the
// attention probabilities, and after each block's attention and MLP output projections; off by
// default (GPT-2 small's published counts have none). `bias_dropout_fusion: true` runs each of the
// last two with its residual add as one kernel (LayerBuilder::dropout_add), as Megatron-LM does by
// default since 2020 (bias_dropout_add_fused_train; --no-bias-dropout-fusion turns it off).
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/transformer_parameters.h"

namespace placesim {

OpGraph build_gpt(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys(
      {"layers", "hidden", "heads", "sequence", "vocabulary", "dropout", "bias_dropout_fusion", "attention"});
  // GPT-2 small.
  const auto [layers, hidden, heads, sequence, vocabulary] =
      read_transformer_shape(parameters, {.layers = 12, .hidden = 768, .heads = 12, .sequence = 1024, .vocabulary = 50257});
  const bool dropout = parameters.bool_or("dropout", false);
  const bool fused_dropout_add = parameters.bool_or("bias_dropout_fusion", false);
  if (fused_dropout_add && !dropout) {
    parameters.at("bias_dropout_fusion").fail("fuses the hidden dropouts with the residual adds: it needs \"dropout\": true");
  }
  const bool fused = read_fused_attention(parameters);

  OpGraph graph("gpt");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  b.set_layer("input");
  Tensor tokens = b.input("token_ids", {sequence}, 4);
  Tensor positions = b.input("position_ids", {sequence}, 4);
  Tensor labels = b.input("labels", {sequence}, 4);

  b.set_layer("embedding");
  Tensor token_embedding = b.embedding("wte", tokens, vocabulary, hidden);
  Tensor position_embedding = b.embedding("wpe", positions, sequence, hidden);
  Tensor x = b.add("add", token_embedding, position_embedding);
  if (dropout) x = b.dropout("dropout", x);

  for (int64_t layer = 0; layer < layers; ++layer) {
    b.set_layer("h." + std::to_string(layer));
    Tensor qkv = b.dense("qkv", b.layer_norm("ln_1", x), 3 * hidden);
    Tensor context = b.core_attention(qkv, heads, heads, fused, dropout);
    Tensor attention = b.dense("attn_proj", context, hidden);
    if (dropout && fused_dropout_add) {
      x = b.dropout_add("attn_proj_dropout_add", attention, x);
    } else {
      if (dropout) attention = b.dropout("attn_proj_dropout", attention);
      x = b.add("add_1", x, attention);
    }
    Tensor mlp = b.gelu("gelu", b.dense("mlp_fc", b.layer_norm("ln_2", x), 4 * hidden));
    Tensor mlp_out = b.dense("mlp_proj", mlp, hidden);
    if (dropout && fused_dropout_add) {
      x = b.dropout_add("mlp_dropout_add", mlp_out, x);
    } else {
      if (dropout) mlp_out = b.dropout("mlp_dropout", mlp_out);
      x = b.add("add_2", x, mlp_out);
    }
  }
  b.set_layer("ln_f");
  x = b.layer_norm("LayerNorm", x);
  b.set_layer("lm_head");
  Tensor logits = b.dense("MatMul", x, vocabulary, /*bias=*/false, /*tied=*/true);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
