// The zoo's generators, one per file: each reads and checks its own parameters (rejecting unknown
// keys with JsonReader) and returns a training graph for a step of `batch_size` samples.
// Internal to models/; callers use build_zoo_model() in models/zoo.h.
#pragma once

#include <cstdint>

#include "sim/core/json_reader.h"
#include "sim/graph/op_graph.h"

namespace placesim {

/// TensorFlow's seed example: two variables and their sum (models/seed_add.cpp).
OpGraph build_tf_add_variables(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// Multi-layer perceptron with ReLU and a softmax cross-entropy loss (models/mlp.cpp).
OpGraph build_mlp(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// AlexNet, torchvision's one-tower variant (models/alexnet.cpp).
OpGraph build_alexnet(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// VGG-16 without batch norm, configuration D (models/vgg16.cpp).
OpGraph build_vgg16(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// ResNet-50/101/152 v1.5 (models/resnet.cpp); `depth` is 50, 101 or 152.
OpGraph build_resnet(int depth, const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// Inception v3 without the auxiliary classifier (models/inception_v3.cpp).
OpGraph build_inception_v3(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// AmoebaNet-D (L, D), the GPipe paper's image model (models/amoebanet.cpp).
OpGraph build_amoebanet_d(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// GPT-2-style decoder-only transformer (models/gpt.cpp).
OpGraph build_gpt(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// The defaults of one Llama 3 size (models/llama.cpp).
struct Llama3Defaults {
  int64_t layers, hidden, heads, kv_heads, ffn, vocabulary, sequence;
};
/// Llama 3 decoder: grouped-query attention, SwiGLU, RMSNorm, untied embeddings (models/llama.cpp).
OpGraph build_llama3(const Llama3Defaults& defaults, const JsonReader& parameters, int64_t batch_size,
                     double dtype_bytes);

/// Mixtral 8x7B: Llama-style blocks with a sparse mixture of SwiGLU experts (models/mixtral.cpp).
OpGraph build_mixtral(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);

/// The defaults of one BERT size (models/bert.cpp).
struct BertDefaults {
  int64_t layers, hidden, heads, ffn;
};
/// BERT pre-training with the masked-LM and next-sentence heads (models/bert.cpp).
OpGraph build_bert(const BertDefaults& defaults, const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// The defaults of one Transformer size (models/transformer.cpp).
struct TransformerDefaults {
  int64_t hidden, heads, ffn;
};
/// The encoder-decoder Transformer of Vaswani et al. 2017 (models/transformer.cpp).
OpGraph build_transformer(const TransformerDefaults& defaults, const JsonReader& parameters, int64_t batch_size,
                          double dtype_bytes);
/// T5 v1.0 base, encoder-decoder with relative position bias (models/t5.cpp).
OpGraph build_t5(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);
/// GNMT as MLPerf's reference builds it: LSTM encoder and decoder with attention (models/gnmt.cpp).
OpGraph build_gnmt(const JsonReader& parameters, int64_t batch_size, double dtype_bytes);

}  // namespace placesim
