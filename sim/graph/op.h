// Op: one operation of a model graph with the costs the simulator needs: forward and backward
// FLOPs, bytes moved, trainable parameters and its output tensor. Values are per training step
// (the batch is already folded in); bytes assume the model's element size.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/graph/kernel_shape.h"

namespace placesim {

/// Which efficiency of a device's roofline applies to an op (see docs/cost-model.md).
enum class OpKind {
  kMatMul,        // dense GEMM: MatMul, Gemm, fully connected, attention score/context
  kConv,          // convolution (im2col/implicit GEMM)
  kElementwise,   // add, relu, dropout, activation functions
  kNormalization, // batch/layer norm
  kReduction,     // softmax, reductions, loss
  kPooling,       // max/avg pooling
  kEmbedding,     // table lookups (gather)
  kDataMovement,  // concat, reshape, transpose, identity, copies
  kVariable,      // variable storage (VariableV2), constants
  kOptimizer,     // parameter update
  kNoOp,          // control-only nodes (init, NoOp)
  kOther,
};

std::string to_string(OpKind kind);
std::optional<OpKind> parse_op_kind(const std::string& text);
/// All kind names, for error messages and schema docs.
std::vector<std::string> op_kind_names();
/// Matrix multiplications and convolutions: the kinds whose kernels are GEMMs.
bool is_gemm_kind(OpKind kind);
/// Normalisations and reductions (batch/layer norm, softmax, the loss): memory-bound kernels that
/// make extra passes over their input, with their own bandwidth fraction.
bool is_reduction_kind(OpKind kind);

struct Op;

/// The attention heads of an attention-scores op (a batched GEMM to [batch, heads, Sq, Sk]) or
/// of a fused attention kernel (KernelKind::kAttention: its batch is samples x heads); 0 for any
/// other op.
int64_t attention_heads(const Op& op);
/// The queries (tokens) of such an attention op, 0 for any other op.
int64_t attention_queries(const Op& op);
/// The prefix of a numbered layer's name, `<prefix>.<index>` (the zoo's transformer blocks `h.0`,
/// `h.1`, ...: what "stage_split": "layers" splits); empty for any other layer name.
std::string_view numbered_layer_prefix(std::string_view layer);

struct Op {
  std::string name;
  std::string type;  ///< framework op type as TensorFlow names it: "VariableV2", "Conv2D", "MatMul"
  OpKind kind = OpKind::kOther;
  double forward_flops = 0;
  double backward_flops = 0;   ///< gradients w.r.t. inputs and weights (usually 2x forward for GEMMs)
  double forward_bytes = 0;    ///< bytes read + written by the forward kernel(s)
  double backward_bytes = 0;   ///< bytes read + written by the backward kernel(s)
  /// Of forward_bytes and of backward_bytes each: what a batch normalization reads again in a
  /// training step to reduce its batch statistics (its input once more; layer_costs.h,
  /// add_batch_statistics_passes); 0 for every other op.
  double batch_statistics_bytes = 0;
  /// Of backward_bytes: summing the gradients of this op's consumers where several read its
  /// output (sim/graph/gradient_sums.h); 0 where one does.
  double gradient_sum_bytes = 0;
  double parameter_count = 0;  ///< trainable parameters owned by this op (elements)
  std::vector<int64_t> output_shape;
  double output_bytes = 0;     ///< bytes of the output tensor (activation)
  double dtype_bytes = 4;      ///< element size of activations and parameters
  bool cpu_only = false;       ///< no accelerator kernel (TensorFlow would refuse to place it on a GPU)
  std::string requested_device;  ///< device the graph itself asks for ("" = none), as tf.device does
  std::string colocate_with;     ///< op whose device this op must share (TF's "loc:@a"), "" = none
  std::string layer;             ///< layer this op belongs to, for summaries and layer-wise splits
  /// The GEMM or convolution this op runs (null: costed by FLOPs and bytes alone). Shared, not
  /// copied, by the tasks that run it.
  std::shared_ptr<const KernelShape> kernel;

  double parameter_bytes() const { return parameter_count * dtype_bytes; }
  /// Forward bytes in an inference step, which normalises with running statistics.
  double inference_forward_bytes() const { return forward_bytes - batch_statistics_bytes; }
};

/// A tensor flowing from one op to another; control edges carry no data (TensorFlow's "^op").
struct TensorEdge {
  double bytes = 0;
  bool control = false;
};

}  // namespace placesim
