// gnmt: GNMT (Wu et al. 2016, "Google's Neural Machine Translation System", arXiv:1609.08144) as
// the MLPerf Training reference implements it (rnn_translator, PyTorch: GNMT-8 of the PipeDream
// and GPipe papers at 4 + 4 layers): an LSTM encoder whose first layer is bidirectional, an LSTM
// decoder with normalized Bahdanau attention on the encoder's output, residual connections from
// the third layer of each stack, one embedding shared by encoder and decoder (share_embedding)
// and an untied classifier with bias. Dropout (0.2) is not modelled, as in the other zoo models.
//
//   encoder: layer 0 bidirectional LSTM(h -> h) x 2, layer 1 LSTM(2h -> h), layers 2.. LSTM(h -> h)
//            with residual adds;
//   decoder: layer 0 LSTM(h -> h), attention of its output (queries) on the encoder's output (keys
//            after a projection, values as they are); layers 1.. LSTM(2h -> h) on [x, context],
//            residual adds from layer 2; classifier h -> V.
//   Defaults: 4 layers per stack, hidden 1024 (model_config of the MLPerf reference), vocabulary
//   32320 (its 32,000-merge BPE vocabulary padded to a multiple of 8), source_sequence and
//   target_sequence 50 (its max_length_train).
//
// Each LSTM layer is its input GEMM plus T sequential recurrent GEMMs and gate steps
// (LayerBuilder::lstm), so the graph has about 2 T ops per layer.
// Parameters (L layers per stack, hidden h, vocabulary V; LSTM(in -> h) = 4h (in + h) + 8h, with
// PyTorch's two bias vectors):
//   embedding V h + encoder 2 LSTM(h) + LSTM(2h) + (L - 2) LSTM(h)
//   + decoder LSTM(h) + attention (query and key projections 2h^2, v, its scale and bias 2h + 1)
//   + (L - 1) LSTM(2h) + classifier h V + V
//   defaults: 33,095,680 + 46,178,304 + (8,396,800 + 2,099,201 + 37,773,312 + 33,128,000)
//           = 160,671,297, the count of "MLPerf GNMT" in NVIDIA apex's distributed-optimizer tests.
// Op names embedding/wte, decoder_embedding/wte and lm_head/MatMul follow the other zoo models';
// the LSTMs and attention are replicated under the default tensor-parallel split.
#include <string>

#include "models/generators.h"
#include "models/layer_builder.h"
#include "models/transformer_parameters.h"

namespace placesim {

namespace {
constexpr int64_t kMaxLayers = 1000;
}  // namespace

OpGraph build_gnmt(const JsonReader& parameters, int64_t batch_size, double dtype_bytes) {
  parameters.reject_unknown_keys({"layers", "hidden", "vocabulary", "source_sequence", "target_sequence"});
  // MLPerf reference: model_config {'hidden_size': 1024, 'num_layers': 4}; at least 2 layers (the
  // bidirectional layer and the one that merges its directions).
  const int64_t layers = parameters.integer_or("layers", 4, 2, kMaxLayers);
  const int64_t hidden = parameters.integer_or("hidden", 1024, 1, kMaxTransformerHidden);
  const int64_t vocabulary = parameters.integer_or("vocabulary", 32320, 1, 1 << 24);
  const int64_t source_sequence = read_sequence_length(parameters, "source_sequence", 50);
  const int64_t target_sequence = read_sequence_length(parameters, "target_sequence", 50);

  OpGraph graph("gnmt");
  LayerBuilder b(graph, batch_size, dtype_bytes);
  const auto [source, target, labels] = b.sequence_pair_inputs(source_sequence, target_sequence);

  b.set_layer("embedding");
  Tensor x = b.embedding("wte", source, vocabulary, hidden);
  b.set_layer("enc.0");
  x = b.concat("outputs", {b.lstm("fw", x, hidden), b.lstm("bw", x, hidden, /*reverse=*/true)}, 2);
  for (int64_t layer = 1; layer < layers; ++layer) {
    b.set_layer("enc." + std::to_string(layer));
    Tensor out = b.lstm("lstm", x, hidden);
    x = layer >= 2 ? b.add("add", x, out) : out;
  }
  const Tensor encoded = x;

  b.set_layer("decoder_embedding");
  Tensor y = b.embedding("wte", target, vocabulary, hidden, /*tied=*/true);
  b.set_layer("dec.0");
  y = b.lstm("lstm", y, hidden);
  b.set_layer("attention");
  Tensor query = b.dense("query", y, hidden, /*bias=*/false);
  Tensor keys = b.dense("key", encoded, hidden, /*bias=*/false);
  Tensor probs = b.softmax("softmax", b.additive_attention_scores("scores", query, keys));
  const Tensor context = b.cross_attention_context("context", probs, encoded, /*heads=*/1);
  for (int64_t layer = 1; layer < layers; ++layer) {
    b.set_layer("dec." + std::to_string(layer));
    Tensor out = b.lstm("lstm", b.concat("concat", {y, context}, 2), hidden);
    y = layer >= 2 ? b.add("add", y, out) : out;
  }
  b.set_layer("lm_head");
  Tensor logits = b.dense("MatMul", y, vocabulary);
  b.set_layer("loss");
  b.softmax_cross_entropy("xent", logits, labels);
  return graph;
}

}  // namespace placesim
