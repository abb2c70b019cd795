// mixtral_8x7b: Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", table 1; the Hugging Face
// Mixtral-8x7B config): Llama-style blocks (RMSNorm, grouped-query attention, untied embedding
// and head, no biases) whose SwiGLU MLP is replaced by a sparse mixture of experts: a router (a
// linear layer to `experts` logits and a softmax) sends each token to its `top_k` experts, each
// expert a SwiGLU MLP of width `ffn`, and the experts' outputs are summed with the router's weights.
//
//   32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 14336, 8 experts, top 2, vocabulary 32000,
//   4096 tokens (the model's window is 32768; the training sequence is the scenario's choice)
//
// Parameters (L layers, hidden h, head dim d, K KV heads, FFN f, E experts, vocabulary V):
//   per block: 2 RMSNorms 2h + Q, O 2h^2 + K, V 2 h K d + router h E + experts 3 E h f
//   total = L (2h + 2h^2 + 2hKd + hE + 3Ehf) + 2 V h + h
//   8x7B: 32 x 1,451,270,144 + 262,144,000 + 4,096 = 46,702,792,704
// Active per token (top_k of the E experts): 32 x 394,305,536 + 262,148,096 = 12,879,925,248.
//
// Each expert runs on the tokens routed to it: per sample, ceil(capacity_factor x top_k x S / E)
// rows (a "MoeDispatch" gather, then the expert's GEMMs, then one "MoeCombine" per layer). The
// default capacity factor 1 is a router without dropped tokens (Mixtral trains dropless); a
// larger one pads every expert to that capacity, as GShard and Switch do. Dropless routing may
// be unbalanced: with `router_imbalance` f the first expert of each layer takes f x the average
// rows, ceil(f k S / E), and the others share the rest equally (expert parallelism then puts
// the busiest expert on the first rank of each expert group, the rank the closed form
// simulates, docs/llm-planning.md#expert-parallelism). Op names: `h.N/expert_E/mlp_fc` and
// `.../mlp_proj` match the default tensor-parallel globs (each expert split as a dense MLP is).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/llama_layers.h"

namespace placesim {

OpGraph build_mixtral(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys({"layers", "hidden", "heads", "kv_heads", "ffn", "sequence", "vocabulary", "experts",
                                  "top_k", "capacity_factor", "router_imbalance", "attention"});
  const LlamaShape shape = read_llama_shape(
      parameters,
      {.transformer = {.layers = 32, .hidden = 4096, .heads = 32, .sequence = 4096, .vocabulary = 32000},
       .kv_heads = 8,
       .ffn = 14336});
  const int64_t experts = parameters.integer_or("experts", 8, 1, 1024);
  const int64_t top_k = parameters.integer_or("top_k", 2, 1, 1024);
  if (top_k > experts) {
    parameters.at("top_k").fail("each token goes to " + std::to_string(top_k) + " experts, but there are " +
                                std::to_string(experts));
  }
  const double capacity_factor = parameters.number_or("capacity_factor", 1.0);
  if (!(capacity_factor >= 1.0 && capacity_factor <= 64.0)) {
    parameters.at("capacity_factor").fail("expected a capacity factor from 1 to 64 (1: no padding, no dropped tokens), got " +
                                          std::to_string(capacity_factor));
  }
  const double imbalance = parameters.number_or("router_imbalance", 1.0);
  const double most = static_cast<double>(experts) / static_cast<double>(top_k);  // every token to the busiest
  if (!(imbalance >= 1.0 && imbalance <= most)) {
    parameters.at("router_imbalance")
        .fail("expected the busiest expert's tokens over the average, from 1 (balanced) to E / top_k = " +
              std::to_string(most) + " (every token), got " + std::to_string(imbalance));
  }
  if (imbalance > 1.0 && capacity_factor > 1.0) {
    parameters.at("router_imbalance")
        .fail("a capacity factor pads every expert to the same rows (tokens above it are dropped); "
              "router_imbalance models dropless routing: give capacity_factor 1");
  }
  const int64_t hidden = shape.transformer.hidden;
  // Rows each expert takes per sample: its share of the routed tokens, padded to the capacity;
  // under imbalance the first expert's f x that share, the others what remains.
  const double routed_rows = static_cast<double>(top_k * shape.transformer.sequence);
  auto rows_for = [](double share) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(share - 1e-9))); };
  const int64_t rows = rows_for(capacity_factor * routed_rows / static_cast<double>(experts));
  const int64_t busiest = rows_for(imbalance * routed_rows / static_cast<double>(experts));
  const int64_t others =
      experts > 1 ? rows_for((routed_rows - static_cast<double>(busiest)) / static_cast<double>(experts - 1)) : busiest;

  OpGraph graph("mixtral");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  auto [x, labels] = llama_inputs(b, shape);
  for (int64_t layer = 0; layer < shape.transformer.layers; ++layer) {
    b.set_layer("h." + std::to_string(layer));
    x = llama_attention(b, x, shape);
    Tensor normed = b.rms_norm("ln_2", x);
    Tensor routing = b.softmax("router_softmax", b.dense("router", normed, experts, /*bias=*/false));
    std::vector<Tensor> outputs;
    for (int64_t e = 0; e < experts; ++e) {
      const std::string expert = "expert_" + std::to_string(e) + "/";
      const int64_t expert_rows = imbalance > 1.0 ? (e == 0 ? busiest : others) : rows;
      Tensor routed = b.moe_dispatch(expert + "dispatch", normed, routing, expert_rows);
      Tensor gate_and_up = b.dense(expert + "mlp_fc", routed, 2 * shape.ffn, /*bias=*/false);
      outputs.push_back(b.dense(expert + "mlp_proj", b.swiglu(expert + "swiglu", gate_and_up), hidden, /*bias=*/false));
    }
    x = b.add("add_2", x, b.moe_combine("moe_combine", outputs, routing, x.shape));
  }
  llama_head(b, x, shape, labels);
  return graph;
}

}  // namespace placesim
