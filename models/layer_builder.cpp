#include "models/layer_builder.h"

#include <optional>
#include <sstream>

#include "sim/graph/fp8_gemm_roles.h"
#include "sim/graph/layer_costs.h"

namespace placesim {
namespace {

// FLOPs per element of normalization, softmax, the loss and elementwise ops, the GEMM and backward
// rules: sim/graph/layer_costs.h, shared with the ONNX importer.
constexpr double kLabelBytes = 4;                    // int32 class ids and token ids
constexpr double kAdditiveAttentionFlopsPerUnit = 4;  // add the bias and the pair, tanh, multiply-add with v

double product(const std::vector<int64_t>& shape, size_t from = 0) {
  double count = 1;
  for (size_t i = from; i < shape.size(); ++i) count *= static_cast<double>(shape[i]);
  return count;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < shape.size(); ++i) text << (i ? ", " : "") << shape[i];
  text << "]";
  return text.str();
}

void expect_rank(const std::string& op, const Tensor& x, size_t rank) {
  if (x.shape.size() != rank) {
    throw ShapeError(op + ": expected a rank-" + std::to_string(rank) + " input, got " + shape_text(x.shape));
  }
}

const char* activation_type(Activation function) {
  switch (function) {
    case Activation::kRelu: return "Relu";
    case Activation::kRelu6: return "Relu6";
    case Activation::kGelu: return "Gelu";
    case Activation::kSigmoid: return "Sigmoid";
    case Activation::kTanh: return "Tanh";
  }
  return "Relu";
}

// Q, K and V are equal thirds of the fused projection's output.
/// A fused QKV projection of `heads` query heads and `kv_heads` key/value heads (grouped-query
/// attention; kv_heads = heads is multi-head attention): width (heads + 2 kv_heads) x head_dim.
/// Returns the hidden size, heads x head_dim.
int64_t expect_qkv(const std::string& op, const Tensor& qkv, int64_t heads, int64_t kv_heads) {
  expect_rank(op, qkv, 3);
  if (heads < 1 || kv_heads < 1 || heads % kv_heads != 0) {
    throw ShapeError(op + ": " + std::to_string(heads) + " query heads are not a multiple of " +
                     std::to_string(kv_heads) + " key/value heads");
  }
  if (qkv.shape[2] % (heads + 2 * kv_heads) != 0) {
    throw ShapeError(op + ": fused QKV width " + std::to_string(qkv.shape[2]) + " is not (heads + 2 kv_heads) x head_dim");
  }
  return qkv.shape[2] / (heads + 2 * kv_heads) * heads;
}

/// One head's GEMM of attention, batched over images x heads: the samples scale the batch.
GemmShape attention_gemm(int64_t images_times_heads, int64_t m, int64_t n, int64_t k) {
  GemmShape gemm;
  gemm.batch = images_times_heads;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.samples_in_batch = true;
  return gemm;
}

}  // namespace

double Tensor::elements() const { return product(shape); }

Conv2dOptions Conv2dOptions::square(int64_t out_channels, int64_t kernel, int64_t stride, int64_t pad, bool bias) {
  Conv2dOptions options;
  options.out_channels = out_channels;
  options.kernel_h = options.kernel_w = kernel;
  options.stride_h = options.stride_w = stride;
  options.pad_h = options.pad_w = pad;
  options.bias = bias;
  return options;
}

int64_t window_output_size(int64_t input, int64_t kernel, int64_t stride, int64_t pad) {
  int64_t span = input + 2 * pad - kernel;
  if (span < 0 || stride < 1) return 0;
  return span / stride + 1;
}

LayerBuilder::LayerBuilder(OpGraph& graph, int64_t batch_size, double dtype_bytes)
    : graph_(graph), batch_size_(batch_size), dtype_bytes_(dtype_bytes) {
  if (batch_size < 1) throw std::invalid_argument("LayerBuilder: batch_size must be positive");
  if (!(dtype_bytes > 0)) throw std::invalid_argument("LayerBuilder: dtype_bytes must be positive");
}

std::string LayerBuilder::qualified(const std::string& name) const {
  return layer_.empty() ? name : layer_ + "/" + name;
}

Op LayerBuilder::make_op(const std::string& name, const std::string& type, OpKind kind,
                         std::vector<int64_t> shape) const {
  Op op;
  op.name = qualified(name);
  op.type = type;
  op.kind = kind;
  op.output_bytes = bytes(product(shape));
  op.output_shape = std::move(shape);
  op.dtype_bytes = dtype_bytes_;
  op.layer = layer_;
  return op;
}

Tensor LayerBuilder::append(Op op, const std::vector<Tensor>& inputs) {
  std::vector<int64_t> shape = op.output_shape;
  OpId id = graph_.add_op(std::move(op));
  for (const Tensor& input : inputs) graph_.add_edge(input.op, id);
  return Tensor{id, std::move(shape)};
}

Tensor LayerBuilder::input(const std::string& name, const std::vector<int64_t>& sample_shape, double element_bytes) {
  std::vector<int64_t> shape{batch_size_};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  Op op = make_op(name, "Placeholder", OpKind::kDataMovement, shape);
  if (element_bytes > 0) {
    op.dtype_bytes = element_bytes;
    op.output_bytes = product(shape) * element_bytes;
  }
  op.forward_bytes = op.output_bytes;
  return append(std::move(op), {});
}

LayerBuilder::SequencePair LayerBuilder::sequence_pair_inputs(int64_t source_sequence, int64_t target_sequence) {
  set_layer("input");
  Tensor source = input("source_ids", {source_sequence}, kLabelBytes);
  Tensor target = input("target_ids", {target_sequence}, kLabelBytes);
  Tensor labels = input("labels", {target_sequence}, kLabelBytes);
  return {source, target, labels};
}

Tensor LayerBuilder::conv2d(const std::string& name, const Tensor& x, const Conv2dOptions& o) {
  expect_rank(qualified(name), x, 4);
  const int64_t n = x.shape[0], in_channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  if (o.out_channels < 1 || o.groups < 1 || in_channels % o.groups != 0 || o.out_channels % o.groups != 0) {
    throw ShapeError(qualified(name) + ": " + std::to_string(in_channels) + " -> " + std::to_string(o.out_channels) +
                     " channels cannot be split into " + std::to_string(o.groups) + " groups");
  }
  const int64_t out_h = window_output_size(height, o.kernel_h, o.stride_h, o.pad_h);
  const int64_t out_w = window_output_size(width, o.kernel_w, o.stride_w, o.pad_w);
  if (out_h < 1 || out_w < 1) {
    throw ShapeError(qualified(name) + ": a " + std::to_string(o.kernel_h) + "x" + std::to_string(o.kernel_w) +
                     " kernel does not fit the " + std::to_string(height) + "x" + std::to_string(width) +
                     " input (padding " + std::to_string(o.pad_h) + "x" + std::to_string(o.pad_w) +
                     "); the image is too small for this model");
  }
  Op op = make_op(name, "Conv2D", OpKind::kConv, {n, o.out_channels, out_h, out_w});
  const double weights = static_cast<double>(o.out_channels) * static_cast<double>(in_channels / o.groups) *
                         static_cast<double>(o.kernel_h * o.kernel_w);
  const double biases = o.bias ? static_cast<double>(o.out_channels) : 0.0;
  // Every output element is a dot product of (Cin / groups) x kh x kw inputs and weights.
  const double macs = product(op.output_shape) * weights / static_cast<double>(o.out_channels);
  op.forward_flops = gemm_forward_flops(macs);
  Conv2dShape conv;
  conv.n = n;
  conv.c = in_channels;
  conv.h = height;
  conv.w = width;
  conv.k = o.out_channels;
  conv.r = o.kernel_h;
  conv.s = o.kernel_w;
  conv.stride_h = o.stride_h;
  conv.stride_w = o.stride_w;
  conv.pad_h = o.pad_h;
  conv.pad_w = o.pad_w;
  conv.groups = o.groups;
  op.kernel = std::make_shared<const KernelShape>(KernelShape::of_conv(conv));
  op.parameter_count = weights + biases;
  op.forward_bytes = bytes(x.elements() + weights + biases) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {x});
}

Op LayerBuilder::normalization_op(const std::string& name, const Tensor& x, const std::string& type,
                                  double parameters) {
  Op op = make_op(name, type, OpKind::kNormalization, x.shape);
  op.forward_flops = kNormalizationFlopsPerElement * x.elements();
  op.parameter_count = parameters;
  op.forward_bytes = bytes(x.elements() + parameters) + op.output_bytes;
  set_backward_costs(op);
  return op;
}

Tensor LayerBuilder::normalization(const std::string& name, const Tensor& x, const std::string& type,
                                   double parameters) {
  return append(normalization_op(name, x, type, parameters), {x});
}

Tensor LayerBuilder::batch_norm(const std::string& name, const Tensor& x) {
  if (x.shape.size() < 2) throw ShapeError(qualified(name) + ": batch norm needs a channel dimension");
  // gamma and beta; its statistics reduce over the batch and the spatial positions
  Op op = normalization_op(name, x, "FusedBatchNorm", 2.0 * static_cast<double>(x.shape[1]));
  add_batch_statistics_passes(op, bytes(x.elements()));
  return append(std::move(op), {x});
}

Tensor LayerBuilder::layer_norm(const std::string& name, const Tensor& x) {
  if (x.shape.size() < 2) throw ShapeError(qualified(name) + ": layer norm needs a feature dimension");
  return normalization(name, x, "LayerNorm", 2.0 * static_cast<double>(x.shape.back()));  // gamma and beta
}

Tensor LayerBuilder::rms_norm(const std::string& name, const Tensor& x) {
  if (x.shape.size() < 2) throw ShapeError(qualified(name) + ": RMS norm needs a feature dimension");
  return normalization(name, x, "RMSNorm", static_cast<double>(x.shape.back()));  // a scale, no shift
}

Tensor LayerBuilder::swiglu(const std::string& name, const Tensor& gate_and_up) {
  if (gate_and_up.shape.size() < 2 || gate_and_up.shape.back() % 2 != 0) {
    throw ShapeError(qualified(name) + ": SwiGLU needs an even feature dimension (gate and up halves)");
  }
  std::vector<int64_t> shape = gate_and_up.shape;
  shape.back() /= 2;
  Op op = make_op(name, "SwiGLU", OpKind::kElementwise, shape);
  op.forward_flops = kElementwiseFlopsPerElement * gate_and_up.elements();  // SiLU of the gate, times up
  op.forward_bytes = bytes(gate_and_up.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {gate_and_up});
}

Tensor LayerBuilder::moe_dispatch(const std::string& name, const Tensor& x, const Tensor& routing, int64_t rows) {
  if (x.shape.size() != 3 || rows < 1) throw ShapeError(qualified(name) + ": expected tokens [N, S, H] and rows >= 1");
  Op op = make_op(name, "MoeDispatch", OpKind::kDataMovement, {x.shape[0], rows, x.shape[2]});
  op.forward_bytes = 2 * op.output_bytes;  // the routed rows read, then written
  set_backward_costs(op);
  std::vector<int64_t> shape = op.output_shape;
  const double read = op.output_bytes;
  OpId id = graph_.add_op(std::move(op));
  graph_.add_edge(x.op, id, read);
  graph_.add_edge(routing.op, id);
  return Tensor{id, std::move(shape)};
}

Tensor LayerBuilder::moe_combine(const std::string& name, const std::vector<Tensor>& experts, const Tensor& routing,
                                 const std::vector<int64_t>& shape) {
  Op op = make_op(name, "MoeCombine", OpKind::kElementwise, shape);
  double expert_elements = 0;
  for (const Tensor& expert : experts) expert_elements += expert.elements();
  op.forward_flops = 2 * expert_elements;
  op.forward_bytes = bytes(expert_elements) + op.output_bytes;
  set_backward_costs(op);
  std::vector<Tensor> inputs = experts;
  inputs.push_back(routing);
  return append(std::move(op), inputs);
}

Tensor LayerBuilder::activation(const std::string& name, const Tensor& x, Activation function) {
  Op op = make_op(name, activation_type(function), OpKind::kElementwise, x.shape);
  op.forward_flops = kElementwiseFlopsPerElement * x.elements();
  op.forward_bytes = bytes(x.elements()) + op.output_bytes;
  set_backward_costs(op, GradientKernel::kUnaryElementwise);
  return append(std::move(op), {x});
}

Tensor LayerBuilder::pool(const std::string& name, const Tensor& x, const PoolOptions& o, const std::string& type) {
  expect_rank(qualified(name), x, 4);
  const int64_t out_h = window_output_size(x.shape[2], o.kernel, o.stride, o.pad);
  const int64_t out_w = window_output_size(x.shape[3], o.kernel, o.stride, o.pad);
  if (out_h < 1 || out_w < 1) {
    throw ShapeError(qualified(name) + ": a " + std::to_string(o.kernel) + "x" + std::to_string(o.kernel) +
                     " window does not fit the " + std::to_string(x.shape[2]) + "x" + std::to_string(x.shape[3]) +
                     " input; the image is too small for this model");
  }
  Op op = make_op(name, type, OpKind::kPooling, {x.shape[0], x.shape[1], out_h, out_w});
  op.forward_flops = pooling_flops(product(op.output_shape), static_cast<double>(o.kernel * o.kernel));
  op.forward_bytes = bytes(x.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {x});
}

Tensor LayerBuilder::max_pool(const std::string& name, const Tensor& x, const PoolOptions& options) {
  return pool(name, x, options, "MaxPool");
}

Tensor LayerBuilder::avg_pool(const std::string& name, const Tensor& x, const PoolOptions& options) {
  return pool(name, x, options, "AvgPool");
}

Tensor LayerBuilder::global_avg_pool(const std::string& name, const Tensor& x) {
  expect_rank(qualified(name), x, 4);
  Op op = make_op(name, "Mean", OpKind::kPooling, {x.shape[0], x.shape[1]});
  op.forward_flops = kReductionFlopsPerInputElement * x.elements();
  op.forward_bytes = bytes(x.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {x});
}

Tensor LayerBuilder::dense(const std::string& name, const Tensor& x, int64_t out_features, bool bias, bool tied) {
  if (x.shape.size() < 2) throw ShapeError(qualified(name) + ": dense needs a feature dimension");
  if (out_features < 1) throw ShapeError(qualified(name) + ": dense needs at least one output feature");
  std::vector<int64_t> shape = x.shape;
  const double in_features = static_cast<double>(shape.back());
  shape.back() = out_features;
  Op op = make_op(name, "MatMul", OpKind::kMatMul, shape);
  const double rows = product(shape, 0) / static_cast<double>(out_features);
  const double weights = in_features * static_cast<double>(out_features);
  const double biases = bias ? static_cast<double>(out_features) : 0.0;
  op.forward_flops = gemm_forward_flops(rows * weights);  // rows x in x out MACs
  GemmShape gemm;
  gemm.m = static_cast<int64_t>(rows);
  gemm.n = out_features;
  gemm.k = static_cast<int64_t>(in_features);
  gemm.input_from_normalization = graph_.op(x.op).kind == OpKind::kNormalization;
  op.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
  op.parameter_count = tied ? 0.0 : weights + biases;
  op.forward_bytes = bytes(x.elements() + weights + biases) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {x});
}

Tensor LayerBuilder::add(const std::string& name, const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) {
    throw ShapeError(qualified(name) + ": cannot add " + shape_text(a.shape) + " and " + shape_text(b.shape));
  }
  Op op = make_op(name, "AddV2", OpKind::kElementwise, a.shape);
  op.forward_flops = kElementwiseFlopsPerElement * a.elements();
  op.forward_bytes = bytes(a.elements() + b.elements()) + op.output_bytes;
  set_backward_costs(op, GradientKernel::kIdentity);
  return append(std::move(op), {a, b});
}

Tensor LayerBuilder::concat(const std::string& name, const std::vector<Tensor>& inputs, int64_t axis) {
  if (inputs.empty()) throw ShapeError(qualified(name) + ": concat of nothing");
  std::vector<int64_t> shape = inputs.front().shape;
  if (axis < 0 || static_cast<size_t>(axis) >= shape.size()) {
    throw ShapeError(qualified(name) + ": concat axis " + std::to_string(axis) + " out of range");
  }
  shape[axis] = 0;
  double input_elements = 0;
  for (const Tensor& input : inputs) {
    std::vector<int64_t> expected = input.shape;
    if (expected.size() == shape.size()) expected[axis] = 0;
    if (expected != shape) {
      throw ShapeError(qualified(name) + ": cannot concatenate " + shape_text(input.shape) + " with " +
                       shape_text(inputs.front().shape) + " along axis " + std::to_string(axis));
    }
    input_elements += input.elements();
  }
  for (const Tensor& input : inputs) shape[axis] += input.shape[axis];
  Op op = make_op(name, "ConcatV2", OpKind::kDataMovement, shape);
  op.forward_bytes = bytes(input_elements) + op.output_bytes;
  set_backward_costs(op, GradientKernel::kSlices);
  return append(std::move(op), inputs);
}

Tensor LayerBuilder::flatten(const std::string& name, const Tensor& x) {
  return reshape(name, x, {x.shape.front(), static_cast<int64_t>(product(x.shape, 1))});
}

Tensor LayerBuilder::reshape(const std::string& name, const Tensor& x, const std::vector<int64_t>& shape) {
  if (product(shape) != x.elements()) {
    throw ShapeError(qualified(name) + ": cannot reshape " + shape_text(x.shape) + " to " + shape_text(shape));
  }
  // A reshape only rewrites the tensor's metadata: no FLOPs and no bytes moved.
  return append(make_op(name, "Reshape", OpKind::kDataMovement, shape), {x});
}

Tensor LayerBuilder::dropout(const std::string& name, const Tensor& x) {
  Op op = make_op(name, "Dropout", OpKind::kElementwise, x.shape);
  op.forward_flops = kElementwiseFlopsPerElement * x.elements();
  op.forward_bytes = bytes(x.elements()) + op.output_bytes;
  set_backward_costs(op, GradientKernel::kUnaryElementwise);
  return append(std::move(op), {x});
}

Tensor LayerBuilder::dropout_add(const std::string& name, const Tensor& x, const Tensor& residual) {
  if (x.shape != residual.shape) {
    throw ShapeError(qualified(name) + ": cannot add " + shape_text(x.shape) + " and " + shape_text(residual.shape));
  }
  Op op = make_op(name, "DropoutAdd", OpKind::kElementwise, x.shape);
  const double elements = x.elements(), mask_bytes = elements;  // PyTorch's dropout mask: 1 byte per element
  op.forward_flops = 2 * kElementwiseFlopsPerElement * elements;
  op.forward_bytes = bytes(2 * elements) + op.output_bytes + mask_bytes;
  // dx = dy x mask / (1 - p): dy and the mask read, dx written; the residual's gradient is dy itself.
  op.backward_flops = kElementwiseFlopsPerElement * elements;
  op.backward_bytes = op.output_bytes + mask_bytes + bytes(elements);
  return append(std::move(op), {x, residual});
}

Tensor LayerBuilder::softmax(const std::string& name, const Tensor& x) {
  Op op = make_op(name, "Softmax", OpKind::kReduction, x.shape);
  op.forward_flops = kSoftmaxFlopsPerElement * x.elements();
  op.forward_bytes = bytes(x.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {x});
}

// The GEMM that produces the loss's logits, directly or through a bias add, is the model's output
// layer: its kernel shape says so (GemmShape::output_layer), so an fp8 run keeps it in 16 bits.
Tensor LayerBuilder::softmax_cross_entropy(const std::string& name, const Tensor& logits, const Tensor& labels) {
  std::vector<int64_t> loss_shape(logits.shape.begin(), logits.shape.end() - 1);
  if (logits.shape.size() < 2 || labels.shape != loss_shape) {
    throw ShapeError(qualified(name) + ": labels " + shape_text(labels.shape) + " do not match logits " +
                     shape_text(logits.shape));
  }
  mark_output_layer(graph_, logits.op);
  Op op = make_op(name, "SparseSoftmaxCrossEntropyWithLogits", OpKind::kReduction, loss_shape);
  op.forward_flops = kCrossEntropyFlopsPerLogit * logits.elements();
  op.forward_bytes = bytes(logits.elements()) + labels.elements() * kLabelBytes + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {logits, labels});
}

Tensor LayerBuilder::embedding(const std::string& name, const Tensor& ids, int64_t vocabulary, int64_t width,
                               bool tied) {
  std::vector<int64_t> shape = ids.shape;
  shape.push_back(width);
  Op op = make_op(name, "GatherV2", OpKind::kEmbedding, shape);
  op.parameter_count = tied ? 0.0 : static_cast<double>(vocabulary) * static_cast<double>(width);
  set_embedding_costs(op, ids.elements() * kLabelBytes, product(shape));
  return append(std::move(op), {ids});
}

Tensor LayerBuilder::attention_scores(const std::string& name, const Tensor& qkv, int64_t heads, int64_t kv_heads) {
  if (kv_heads == 0) kv_heads = heads;
  const int64_t hidden = expect_qkv(qualified(name), qkv, heads, kv_heads);
  const int64_t n = qkv.shape[0], sequence = qkv.shape[1], key_width = hidden / heads * kv_heads;
  Op op = make_op(name, "BatchMatMulV2", OpKind::kMatMul, {n, heads, sequence, sequence});
  const double query_and_key =
      static_cast<double>(n) * static_cast<double>(sequence) * static_cast<double>(hidden + key_width);
  // Each score is a dot product over head_dim = hidden / heads.
  const double macs = product(op.output_shape) * static_cast<double>(hidden / heads);
  op.forward_flops = gemm_forward_flops(macs);
  op.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(attention_gemm(n * heads, sequence, sequence, hidden / heads)));
  op.forward_bytes = bytes(query_and_key) + op.output_bytes;
  set_backward_costs(op);
  std::vector<int64_t> shape = op.output_shape;
  OpId id = graph_.add_op(std::move(op));
  graph_.add_edge(qkv.op, id, bytes(query_and_key));
  return Tensor{id, std::move(shape)};
}

Tensor LayerBuilder::fused_attention(const std::string& name, const Tensor& qkv, int64_t heads, int64_t kv_heads,
                                     bool causal) {
  if (kv_heads == 0) kv_heads = heads;
  const int64_t hidden = expect_qkv(qualified(name), qkv, heads, kv_heads);
  const int64_t n = qkv.shape[0], sequence = qkv.shape[1], head_dim = hidden / heads;
  Op op = make_op(name, "FlashAttention", OpKind::kMatMul, {n, sequence, hidden});
  AttentionShape shape;
  shape.batch = n * heads;
  shape.queries = sequence;
  shape.keys = sequence;
  shape.head_dim = head_dim;
  shape.causal = causal;
  op.kernel = std::make_shared<const KernelShape>(KernelShape::of_attention(shape));
  op.forward_flops = shape.forward_flops();
  op.backward_flops = shape.backward_flops();
  const double read = static_cast<double>(qkv.elements());  // Q, K and V
  op.forward_bytes = bytes(read) + op.output_bytes;
  // Backward reads Q, K, V, the output and its gradient, writes dQ, dK, dV.
  op.backward_bytes = bytes(2 * read) + 2 * op.output_bytes;
  std::vector<int64_t> out = op.output_shape;
  OpId id = graph_.add_op(std::move(op));
  graph_.add_edge(qkv.op, id, bytes(read));
  return Tensor{id, std::move(out)};
}

Tensor LayerBuilder::core_attention(const Tensor& qkv, int64_t heads, int64_t kv_heads, bool fused, bool dropout) {
  if (fused) return fused_attention("flash_attention", qkv, heads, kv_heads, /*causal=*/true);
  Tensor probs = softmax("softmax", attention_scores("scores", qkv, heads, kv_heads));
  if (dropout) probs = this->dropout("attn_dropout", probs);
  return attention_context("context", probs, qkv, heads, kv_heads);
}

Tensor LayerBuilder::attention_context(const std::string& name, const Tensor& probs, const Tensor& qkv,
                                       int64_t heads, int64_t kv_heads) {
  if (kv_heads == 0) kv_heads = heads;
  const int64_t hidden = expect_qkv(qualified(name), qkv, heads, kv_heads);
  const int64_t n = qkv.shape[0], sequence = qkv.shape[1], value_width = hidden / heads * kv_heads;
  if (probs.shape != std::vector<int64_t>{n, heads, sequence, sequence}) {
    throw ShapeError(qualified(name) + ": attention probabilities " + shape_text(probs.shape) +
                     " do not match the QKV projection " + shape_text(qkv.shape));
  }
  Op op = make_op(name, "BatchMatMulV2", OpKind::kMatMul, {n, sequence, hidden});
  const double value = static_cast<double>(n) * static_cast<double>(sequence) * static_cast<double>(value_width);
  // Each context element is a dot product over the sequence.
  const double macs = product(op.output_shape) * static_cast<double>(sequence);
  op.forward_flops = gemm_forward_flops(macs);
  op.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(attention_gemm(n * heads, sequence, hidden / heads, sequence)));
  op.forward_bytes = bytes(probs.elements() + value) + op.output_bytes;
  set_backward_costs(op);
  std::vector<int64_t> shape = op.output_shape;
  OpId id = graph_.add_op(std::move(op));
  graph_.add_edge(probs.op, id);
  graph_.add_edge(qkv.op, id, bytes(value));
  return Tensor{id, std::move(shape)};
}

Tensor LayerBuilder::slice(const std::string& name, const Tensor& x, int64_t axis, int64_t begin, int64_t size,
                           bool squeeze) {
  if (axis < 1 || static_cast<size_t>(axis) >= x.shape.size() || begin < 0 || size < 1 ||
      begin + size > x.shape[axis] || (squeeze && size != 1)) {
    throw ShapeError(qualified(name) + ": cannot slice " + std::to_string(size) + " from " + std::to_string(begin) +
                     " along axis " + std::to_string(axis) + " of " + shape_text(x.shape));
  }
  std::vector<int64_t> shape = x.shape;
  shape[axis] = size;
  if (squeeze) shape.erase(shape.begin() + axis);
  Op op = make_op(name, "StridedSlice", OpKind::kDataMovement, shape);
  op.forward_bytes = 2 * op.output_bytes;  // the selected entries read, then written
  set_backward_costs(op);
  Tensor out{graph_.add_op(std::move(op)), shape};
  graph_.add_edge(x.op, out.op, bytes(out.elements()));
  return out;
}

Tensor LayerBuilder::bias_add(const std::string& name, const Tensor& x) {
  if (x.shape.size() < 2) throw ShapeError(qualified(name) + ": a bias needs a feature dimension");
  Op op = make_op(name, "BiasAdd", OpKind::kElementwise, x.shape);
  const double width = static_cast<double>(x.shape.back());
  op.forward_flops = kElementwiseFlopsPerElement * x.elements();
  op.parameter_count = width;
  op.forward_bytes = bytes(x.elements() + width) + op.output_bytes;
  set_backward_costs(op);  // the bias gradient sums the output gradient
  return append(std::move(op), {x});
}

Tensor LayerBuilder::cross_attention_scores(const std::string& name, const Tensor& query, const Tensor& key,
                                            int64_t heads) {
  expect_rank(qualified(name), query, 3);
  expect_rank(qualified(name), key, 3);
  const int64_t n = query.shape[0], query_length = query.shape[1], hidden = query.shape[2], key_length = key.shape[1];
  if (key.shape[0] != n || key.shape[2] != hidden || heads < 1 || hidden % heads != 0) {
    throw ShapeError(qualified(name) + ": queries " + shape_text(query.shape) + " and keys " + shape_text(key.shape) +
                     " do not make " + std::to_string(heads) + " heads");
  }
  Op op = make_op(name, "BatchMatMulV2", OpKind::kMatMul, {n, heads, query_length, key_length});
  const double macs = product(op.output_shape) * static_cast<double>(hidden / heads);
  op.forward_flops = gemm_forward_flops(macs);
  op.kernel = std::make_shared<const KernelShape>(
      KernelShape::of_gemm(attention_gemm(n * heads, query_length, key_length, hidden / heads)));
  op.forward_bytes = bytes(query.elements() + key.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {query, key});
}

Tensor LayerBuilder::cross_attention_context(const std::string& name, const Tensor& probs, const Tensor& value,
                                             int64_t heads) {
  expect_rank(qualified(name), probs, 4);
  expect_rank(qualified(name), value, 3);
  const int64_t n = value.shape[0], key_length = value.shape[1], hidden = value.shape[2];
  if (probs.shape[0] != n || probs.shape[1] != heads || probs.shape[3] != key_length || hidden % heads != 0) {
    throw ShapeError(qualified(name) + ": attention probabilities " + shape_text(probs.shape) +
                     " do not match the values " + shape_text(value.shape));
  }
  const int64_t query_length = probs.shape[2];
  Op op = make_op(name, "BatchMatMulV2", OpKind::kMatMul, {n, query_length, hidden});
  const double macs = product(op.output_shape) * static_cast<double>(key_length);
  op.forward_flops = gemm_forward_flops(macs);
  op.kernel = std::make_shared<const KernelShape>(
      KernelShape::of_gemm(attention_gemm(n * heads, query_length, hidden / heads, key_length)));
  op.forward_bytes = bytes(probs.elements() + value.elements()) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {probs, value});
}

Tensor LayerBuilder::relative_position_bias(const std::string& name, const Tensor& scores, int64_t buckets,
                                            bool owns_table) {
  expect_rank(qualified(name), scores, 4);
  if (buckets < 1) throw ShapeError(qualified(name) + ": a relative position bias needs at least one bucket");
  Op op = make_op(name, "RelativePositionBias", OpKind::kElementwise, scores.shape);
  const double table = static_cast<double>(buckets) * static_cast<double>(scores.shape[1]);
  op.forward_flops = kElementwiseFlopsPerElement * scores.elements();
  op.parameter_count = owns_table ? table : 0.0;
  op.forward_bytes = bytes(scores.elements() + table) + op.output_bytes;
  set_backward_costs(op);  // the table's gradient: a scatter-add of the scores' gradient
  return append(std::move(op), {scores});
}

Tensor LayerBuilder::additive_attention_scores(const std::string& name, const Tensor& query, const Tensor& keys) {
  expect_rank(qualified(name), query, 3);
  expect_rank(qualified(name), keys, 3);
  const int64_t n = query.shape[0], query_length = query.shape[1], units = query.shape[2], key_length = keys.shape[1];
  if (keys.shape[0] != n || keys.shape[2] != units) {
    throw ShapeError(qualified(name) + ": queries " + shape_text(query.shape) + " and keys " + shape_text(keys.shape) +
                     " differ in width");
  }
  Op op = make_op(name, "AdditiveAttention", OpKind::kElementwise, {n, 1, query_length, key_length});
  const double pairs = product(op.output_shape), width = static_cast<double>(units);
  op.forward_flops = kAdditiveAttentionFlopsPerUnit * pairs * width;
  op.parameter_count = 2 * width + 1;  // v, its norm's scale, the bias of the sum
  op.forward_bytes = bytes(query.elements() + keys.elements() + op.parameter_count + 2 * pairs * width) + op.output_bytes;
  set_backward_costs(op);
  return append(std::move(op), {query, keys});
}

Tensor LayerBuilder::lstm(const std::string& name, const Tensor& x, int64_t hidden, bool reverse) {
  expect_rank(qualified(name), x, 3);
  if (hidden < 1) throw ShapeError(qualified(name) + ": an LSTM needs at least one hidden unit");
  const int64_t n = x.shape[0], steps = x.shape[1], gates = 4 * hidden;
  const double h = static_cast<double>(hidden), rows = static_cast<double>(n);

  // The input projection of every step, one GEMM; it owns W_ih and PyTorch's two biases b_ih, b_hh.
  Tensor projected = dense(name + "/input", x, gates);
  graph_.mutable_op(projected.op).parameter_count += static_cast<double>(gates);

  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  std::optional<Tensor> previous_cell;
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = reverse ? steps - 1 - i : i;
    const std::string step = std::to_string(t);
    // The recurrent GEMM of h_{t-1} [N, hidden] x W_hh [hidden, 4 hidden].
    Op recurrent = make_op(name + "/step_" + step, "MatMul", OpKind::kMatMul, {n, gates});
    const double weights = h * static_cast<double>(gates);
    recurrent.forward_flops = gemm_forward_flops(rows * weights);
    GemmShape gemm;
    gemm.m = n;
    gemm.n = gates;
    gemm.k = hidden;
    recurrent.kernel = std::make_shared<const KernelShape>(KernelShape::of_gemm(gemm));
    recurrent.parameter_count = previous_cell ? 0.0 : weights;
    recurrent.forward_bytes = bytes(rows * h + weights) + recurrent.output_bytes;
    set_backward_costs(recurrent);
    const OpId recurrent_id = graph_.add_op(std::move(recurrent));
    if (previous_cell) {
      graph_.add_edge(previous_cell->op, recurrent_id, bytes(rows * h));  // h_{t-1}
    } else {
      graph_.add_control_edge(projected.op, recurrent_id);  // h_0 = 0
    }

    // The gates: sigmoid(i, f, o), tanh(g) of the two pre-activations, then c_t and h_t.
    Op cell = make_op(name + "/cell_" + step, "LSTMBlockCell", OpKind::kElementwise, {n, 1, hidden});
    cell.forward_flops = kLstmCellFlopsPerUnit * rows * h;
    // Reads both pre-activations and c_{t-1}; writes c_t and h_t.
    cell.forward_bytes = bytes(2 * rows * static_cast<double>(gates) + rows * h) + 2 * bytes(rows * h);
    set_backward_costs(cell);
    const OpId cell_id = graph_.add_op(std::move(cell));
    graph_.add_edge(recurrent_id, cell_id);
    graph_.add_edge(projected.op, cell_id, bytes(rows * static_cast<double>(gates)));  // this step's slice
    if (previous_cell) graph_.add_edge(previous_cell->op, cell_id, bytes(rows * h));  // c_{t-1}
    previous_cell = Tensor{cell_id, {n, 1, hidden}};
    outputs[static_cast<size_t>(t)] = *previous_cell;
  }
  return concat(name + "/outputs", outputs, 1);
}

}  // namespace placesim
