// LayerBuilder: appends the ops of common neural-network layers to an OpGraph with their costs
// filled in, so that the zoo generators only describe architectures. Not thread-safe; one
// builder writes one graph.
//
// Cost conventions (docs/model-graphs.md explains them with examples; the per-element FLOPs, the
// GEMM, backward and embedding rules are sim/graph/layer_costs.h, which the ONNX importer applies too):
//  * Shapes include the batch: every tensor's first dimension is the step's batch size, and every
//    cost is per training step of `batch_size` samples. Images are NCHW.
//  * FLOPs count multiplies and adds separately. Conv2D and MatMul: forward_flops = 2 x MACs; the
//    bias add is fused into the GEMM epilogue and not counted (as in torchvision's and fvcore's
//    published counts), so forward_flops / 2 is exactly the layer's MACs.
//  * Elementwise ops (activations incl. GELU, add, dropout): 1 FLOP per output element.
//    Normalization (batch and layer norm): 5 FLOPs per element (mean 1, variance 2, then
//    y = x * scale + shift with the per-channel scale and shift precomputed 2).
//    Softmax: 5 per element (max, subtract, exp, sum, divide); softmax cross-entropy: 6 per logit
//    (softmax plus the log of the picked class). Pooling: 1 per window element per output
//    (kernel_h x kernel_w per output); global average pooling: 1 per input element.
//  * backward_flops = 2 x forward_flops for Conv2D and MatMul (input gradient + weight gradient,
//    also for the first layer, whose input gradient a framework could skip); = forward_flops for
//    every other op with data, except embedding lookups, whose forward is a copy (0 FLOPs) and
//    whose backward is a scatter-add of 1 FLOP per output element.
//  * forward_bytes = bytes read (inputs + weights) + bytes written (output), once each.
//    backward_bytes = 2 x forward_bytes for every op that moves data (the backward kernels read the
//    output gradient and the saved inputs and write input and weight gradients). Reshape and
//    flatten are metadata-only: 0 bytes. Placeholders write their output once.
//  * output_bytes = output elements x element bytes; parameter_count = weights + biases; batch norm
//    and layer norm own gamma and beta (trainable), not the running mean and variance, as in
//    Keras' "trainable params".
//  * Op names are "<layer>/<local name>" (just the local name when no layer is set); every op gets
//    the current layer and a TensorFlow op type ("Conv2D", "MatMul", "FusedBatchNorm", ...).
//  * Edges carry the producer's output bytes, except attention's QK^T and context matmuls, which
//    read only their part (Q and K: 2/3; V: 1/3) of the fused QKV projection.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/graph/op_graph.h"

namespace placesim {

/// A layer cannot be built on its input (a kernel larger than the padded input, channels not
/// divisible by groups, mismatched shapes). The zoo turns it into an InputError at the
/// parameters that caused it.
class ShapeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An op's output as a later layer sees it: the producing op and its shape (batch first).
struct Tensor {
  OpId op = 0;
  std::vector<int64_t> shape;

  double elements() const;
};

/// Options of a 2-D convolution on NCHW tensors (torchvision's nn.Conv2d arguments).
struct Conv2dOptions {
  int64_t out_channels = 0;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_h = 0;
  int64_t pad_w = 0;
  int64_t groups = 1;
  bool bias = false;

  /// A square kernel with equal stride and padding in both directions.
  static Conv2dOptions square(int64_t out_channels, int64_t kernel, int64_t stride = 1, int64_t pad = 0,
                              bool bias = false);
};

/// Options of a max or average pooling window (floor rounding, as torchvision's default).
struct PoolOptions {
  int64_t kernel = 2;
  int64_t stride = 2;
  int64_t pad = 0;
};

/// FLOPs per hidden unit of one LSTM cell step: add the input and recurrent pre-activations (4),
/// three sigmoids and two tanhs (5), c = f c + i g (3), h = o tanh(c) (1); 1 FLOP per elementwise
/// operation as for the other activations.
constexpr double kLstmCellFlopsPerUnit = 13;

enum class Activation { kRelu, kRelu6, kGelu, kSigmoid, kTanh };

class LayerBuilder {
 public:
  /// Builds into `graph` for steps of `batch_size` samples with `dtype_bytes`-byte elements.
  /// Throws std::invalid_argument when batch_size < 1 or dtype_bytes <= 0.
  LayerBuilder(OpGraph& graph, int64_t batch_size, double dtype_bytes);

  /// Ops added from now on belong to `layer` and are named "<layer>/<name>".
  void set_layer(std::string layer) { layer_ = std::move(layer); }
  const std::string& layer() const { return layer_; }
  int64_t batch_size() const { return batch_size_; }
  double dtype_bytes() const { return dtype_bytes_; }
  OpGraph& graph() { return graph_; }

  /// A Placeholder of shape [batch, sample_shape...] with `element_bytes`-byte elements
  /// (0 means the model's dtype; token ids and labels are int32, 4 bytes).
  Tensor input(const std::string& name, const std::vector<int64_t>& sample_shape, double element_bytes = 0);

  /// An encoder-decoder's inputs, in layer "input": int32 source and target token ids and the
  /// target's labels.
  struct SequencePair {
    Tensor source, target, labels;
  };
  SequencePair sequence_pair_inputs(int64_t source_sequence, int64_t target_sequence);

  /// Conv2D on an NCHW tensor: MACs = N x Hout x Wout x Cout x (Cin / groups) x kh x kw.
  Tensor conv2d(const std::string& name, const Tensor& x, const Conv2dOptions& options);
  /// FusedBatchNorm over the channels (dimension 1): 2 x C parameters.
  Tensor batch_norm(const std::string& name, const Tensor& x);
  /// LayerNorm over the last dimension: 2 x width parameters.
  Tensor layer_norm(const std::string& name, const Tensor& x);
  Tensor activation(const std::string& name, const Tensor& x, Activation function);
  Tensor relu(const std::string& name, const Tensor& x) { return activation(name, x, Activation::kRelu); }
  Tensor gelu(const std::string& name, const Tensor& x) { return activation(name, x, Activation::kGelu); }
  Tensor max_pool(const std::string& name, const Tensor& x, const PoolOptions& options);
  Tensor avg_pool(const std::string& name, const Tensor& x, const PoolOptions& options);
  /// Mean over H and W: [N, C, H, W] -> [N, C].
  Tensor global_avg_pool(const std::string& name, const Tensor& x);

  /// Fully connected layer on the last dimension: [..., in] -> [..., out_features];
  /// MACs = rows x in x out. `tied` weights belong to another op (no parameters here, but the
  /// weights are still read).
  Tensor dense(const std::string& name, const Tensor& x, int64_t out_features, bool bias = true, bool tied = false);

  /// AddV2 of two tensors of one shape (residual connections, embedding sums).
  Tensor add(const std::string& name, const Tensor& a, const Tensor& b);
  /// ConcatV2 along `axis` (1 = channels for NCHW); other dimensions must agree.
  Tensor concat(const std::string& name, const std::vector<Tensor>& inputs, int64_t axis = 1);
  /// Reshape to [batch, rest...] where rest is the product of the other dimensions.
  Tensor flatten(const std::string& name, const Tensor& x);
  /// Reshape to `shape` (same element count).
  Tensor reshape(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape);
  Tensor dropout(const std::string& name, const Tensor& x);
  /// `residual` + dropout(`x`) in one kernel (Megatron-LM's bias_dropout_add_fused_train, the
  /// bias being the dense op's): reads both, writes the sum and a 1-byte mask per element;
  /// backward writes dropout's input gradient from dy and the mask (the residual's is dy).
  Tensor dropout_add(const std::string& name, const Tensor& x, const Tensor& residual);
  /// Softmax over the last dimension.
  Tensor softmax(const std::string& name, const Tensor& x);
  /// SparseSoftmaxCrossEntropyWithLogits: logits [..., classes] and labels [...] -> loss [...].
  Tensor softmax_cross_entropy(const std::string& name, const Tensor& logits, const Tensor& labels);
  /// GatherV2 of rows of a [vocabulary, width] table: ids [...] -> [..., width]. A `tied` table
  /// belongs to another op (a decoder's lookup in a shared source/target embedding): no parameters.
  Tensor embedding(const std::string& name, const Tensor& ids, int64_t vocabulary, int64_t width, bool tied = false);
  /// StridedSlice of `size` entries from `begin` along `axis` (BERT's [CLS] token: axis 1, 0, 1),
  /// the axis dropped when `size` is 1 and `squeeze`: a copy, output bytes read and written.
  Tensor slice(const std::string& name, const Tensor& x, int64_t axis, int64_t begin, int64_t size, bool squeeze);
  /// BiasAdd of a learned vector over the last dimension (a bias kept apart from a tied GEMM's
  /// weights, as BERT's MLM decoder bias): 1 FLOP per element, `width` parameters.
  Tensor bias_add(const std::string& name, const Tensor& x);

  /// Attention scores Q K^T from a fused projection `qkv` [N, S, 3H]: BatchMatMulV2 to
  /// [N, heads, S, S]; MACs = N x heads x S x S x (H / heads).
  /// With `kv_heads` (grouped-query attention, 0 = heads) the projection is [N, S, (heads +
  /// 2 kv_heads) H / heads]; the GEMM's FLOPs are the same, K is read once per group.
  Tensor attention_scores(const std::string& name, const Tensor& qkv, int64_t heads, int64_t kv_heads = 0);
  /// Attention context probs x V: [N, heads, S, S] and V from `qkv` -> [N, S, H] (heads merged);
  /// MACs = N x heads x S x S x (H / heads).
  Tensor attention_context(const std::string& name, const Tensor& probs, const Tensor& qkv, int64_t heads,
                           int64_t kv_heads = 0);
  /// The core attention as one fused kernel (FlashAttention: Dao et al. 2022, 2023; Shah et al.
  /// 2024) on a fused projection `qkv` (as attention_scores): softmax(Q K^T / sqrt(d)) V -> [N, S,
  /// H], the [S, S] scores never in memory. FLOPs as FlashAttention counts them: forward 4 N
  /// heads S^2 d (half with `causal`), backward 2.5x (it recomputes the scores); bytes: Q, K, V
  /// read and the output written, both ways. Its kernel shape (KernelKind::kAttention) carries
  /// the heads, so it is split like the unfused ops (tensor_parallel.h).
  Tensor fused_attention(const std::string& name, const Tensor& qkv, int64_t heads, int64_t kv_heads, bool causal);
  /// A decoder's core attention on `qkv`: one causal `flash_attention` op when `fused`, else
  /// `scores`, `softmax` (then `attn_dropout` when `dropout`) and `context`. Returns the context.
  Tensor core_attention(const Tensor& qkv, int64_t heads, int64_t kv_heads, bool fused, bool dropout = false);
  /// Mixture of experts (Shazeer et al. 2017; Fedus et al. 2022): the tokens of `x` [N, S, H] that
  /// the router `routing` sent to one expert, `rows` per sample: a gather ("MoeDispatch", no FLOPs,
  /// the rows read and written) to [N, rows, H].
  Tensor moe_dispatch(const std::string& name, const Tensor& x, const Tensor& routing, int64_t rows);
  /// The experts' outputs `experts` ([N, rows_e, H] each) weighted by `routing` and summed back
  /// into the tokens' places, [N, S, H] ("MoeCombine"): 2 FLOPs per expert output element (scale
  /// and add), every expert output read and the result written.
  Tensor moe_combine(const std::string& name, const std::vector<Tensor>& experts, const Tensor& routing,
                     const std::vector<int64_t>& shape);
  /// Cross-attention scores Q K^T of queries [N, Sq, H] on keys [N, Sk, H] from another sequence
  /// (an encoder's output): BatchMatMulV2 to [N, heads, Sq, Sk]; MACs = N x heads x Sq x Sk x (H / heads).
  Tensor cross_attention_scores(const std::string& name, const Tensor& query, const Tensor& key, int64_t heads);
  /// Cross-attention context probs [N, heads, Sq, Sk] x values [N, Sk, H] -> [N, Sq, H];
  /// MACs = N x heads x Sq x Sk x (H / heads).
  Tensor cross_attention_context(const std::string& name, const Tensor& probs, const Tensor& value, int64_t heads);
  /// T5's relative position bias (Raffel et al. 2020, section 2.1): a learned scalar per head and
  /// position bucket added to attention scores [N, heads, Sq, Sk]: 1 FLOP per score. The table
  /// (buckets x heads parameters) belongs to the op that `owns_table` (T5's first layer of a
  /// stack); the other layers reuse it. Bucketing the positions is integer work, not costed.
  Tensor relative_position_bias(const std::string& name, const Tensor& scores, int64_t buckets, bool owns_table);
  /// Bahdanau's additive attention scores with normalization (Bahdanau et al. 2015; Salimans and
  /// Kingma 2016's weight norm on v, as MLPerf's GNMT): projected queries [N, Sq, u] and keys
  /// [N, Sk, u] -> v^T tanh(q + k + b) [N, 1, Sq, Sk] (one head). Per score 4u FLOPs (add the bias and the pair,
  /// tanh, multiply-add with v); the [N, Sq, Sk, u] sum is written and read once (PyTorch
  /// materializes it). Parameters: v, its norm scale and the bias, 2u + 1.
  Tensor additive_attention_scores(const std::string& name, const Tensor& query, const Tensor& keys);
  /// A one-direction LSTM layer (Hochreiter and Schmidhuber 1997; PyTorch's nn.LSTM gates) over
  /// x [N, T, in] -> [N, T, hidden], costed as its GEMMs and gate math:
  ///  * "<name>/input": the input projection of all T steps as one GEMM [N T, in] x [in, 4 hidden],
  ///    owning W_ih and both biases (4 hidden (in + 2) parameters);
  ///  * per step t, "<name>/step_t": the recurrent GEMM [N, hidden] x [hidden, 4 hidden] of h_{t-1},
  ///    T sequential MatMul ops. The first step of the recurrence multiplies the zero initial state
  ///    (as cuDNN does; a control edge orders it after the input projection) and owns W_hh (4
  ///    hidden^2 parameters): its backward is the last to add to the weight's gradient;
  ///  * per step, "<name>/cell_t": the gate math, kLstmCellFlopsPerUnit FLOPs per hidden unit;
  ///  * "<name>/outputs": the T hidden states stacked (ConcatV2) into [N, T, hidden].
  /// `reverse` runs the recurrence from the last step to the first (the backward direction of a
  /// bidirectional layer); the output stays in time order. Op names use the actual step index t.
  Tensor lstm(const std::string& name, const Tensor& x, int64_t hidden, bool reverse = false);
  /// RMSNorm (Zhang and Sennrich 2019) on the last dimension: a scale of `width` parameters.
  Tensor rms_norm(const std::string& name, const Tensor& x);
  /// SwiGLU (Shazeer 2020): [..., 2f] (gate and up projections fused) -> SiLU(gate) x up [..., f].
  Tensor swiglu(const std::string& name, const Tensor& gate_and_up);

 private:
  Op make_op(const std::string& name, const std::string& type, OpKind kind, std::vector<int64_t> shape) const;
  Tensor append(Op op, const std::vector<Tensor>& inputs);
  Tensor pool(const std::string& name, const Tensor& x, const PoolOptions& options, const std::string& type);
  /// A normalization over `x` with `parameters` learned values (scales and shifts).
  Tensor normalization(const std::string& name, const Tensor& x, const std::string& type, double parameters);
  /// That normalization's op, not yet appended.
  Op normalization_op(const std::string& name, const Tensor& x, const std::string& type, double parameters);
  double bytes(double elements) const { return elements * dtype_bytes_; }
  std::string qualified(const std::string& name) const;

  OpGraph& graph_;
  int64_t batch_size_;
  double dtype_bytes_;
  std::string layer_;
};

/// Output size of a convolution or pooling window along one dimension (floor rounding):
/// floor((input + 2 pad - kernel) / stride) + 1.
int64_t window_output_size(int64_t input, int64_t kernel, int64_t stride, int64_t pad);

}  // namespace placesim
