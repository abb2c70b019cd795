// KernelShape: the shape of the main kernel an op runs (a GEMM or a 2-D convolution), so that
// cost models can see more than FLOPs (tiles and waves, convolution algorithms) and the real
// backend can run the same kernel. An op without one (elementwise, pooling, ...) is costed by
// its FLOPs and bytes alone. Conventions: docs/cost-model.md ("Kernel shapes").
#pragma once

#include <cstdint>
#include <string>

namespace placesim {

/// C[batch][m x n] = op(A)[m x k] op(B)[k x n], as cuBLAS counts a (batched) GEMM in row-major
/// terms. For a layer's forward GEMM, `m` (or `batch`, when `samples_in_batch`) grows with the
/// samples of the step: a dense layer on [rows, in] has m = rows, n = out, k = in.
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  bool samples_in_batch = false;  ///< the samples scale `batch` (attention's heads x sequences), else `m`
  /// `A` is a normalization's output (a layer norm or RMSNorm feeding a dense layer): under FP8,
  /// Transformer Engine's LayerNormLinear casts it to FP8 in the norm's own kernel, so the GEMM's
  /// forward needs no cast of its own (sim/cost/fp8_casts.h).
  bool input_from_normalization = false;
  /// The model's output layer (the GEMM whose output is the loss's logits): frameworks keep it in
  /// 16 bits under FP8 (Megatron-Core's output layer is its own ColumnParallelLinear, outside
  /// Transformer Engine; sim/plan/kernel_precision.h).
  bool output_layer = false;

  double flops() const { return 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
                                static_cast<double>(k); }
  bool operator==(const GemmShape& other) const;
};

/// A 2-D convolution on NCHW tensors: n images of c x h x w, k filters of (c / groups) x r x s
/// (r rows, s columns), as cuDNN describes it. p x q is the output size.
struct Conv2dShape {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t k = 0, r = 1, s = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;

  int64_t p() const;  ///< output rows: floor((h + 2 pad_h - dilation_h (r - 1) - 1) / stride_h) + 1
  int64_t q() const;  ///< output columns, likewise
  /// 2 x MACs of the direct convolution: 2 n k p q (c / groups) r s.
  double direct_flops() const;
  bool operator==(const Conv2dShape& other) const;
};

/// A fused attention kernel (FlashAttention: Dao et al. 2022, 2023; Shah et al. 2024): softmax(Q
/// K^T / sqrt(d)) V for `batch` (samples x query heads) heads of `queries` queries against `keys`
/// keys of `head_dim` each, the scores never written to memory. With a causal mask the kernel
/// skips the masked half of the key blocks. Its backward recomputes the scores (five GEMMs' work
/// to the forward's two).
struct AttentionShape {
  int64_t batch = 1;  ///< samples x query heads: the samples scale it
  int64_t queries = 0;
  int64_t keys = 0;
  int64_t head_dim = 0;
  bool causal = false;

  /// Forward FLOPs as FlashAttention counts them: 4 batch queries keys head_dim, half with a causal mask.
  double forward_flops() const;
  /// Backward: 2.5 x the forward (FlashAttention's benchmark convention: five GEMMs to two).
  double backward_flops() const { return 2.5 * forward_flops(); }
  bool operator==(const AttentionShape& other) const;
};

enum class KernelKind { kNone, kGemm, kConv2d, kAttention };

/// Which of an op's kernels a task runs: the forward kernel, and the two backward kernels
/// (gradient of the input: "data"; of the weights: "filter"). A backward task under
/// recomputation runs the forward kernel again too.
enum KernelPass : uint8_t {
  kForwardPass = 1,
  kBackwardDataPass = 2,
  kBackwardFilterPass = 4,
};
constexpr uint8_t kBackwardPasses = kBackwardDataPass | kBackwardFilterPass;

struct KernelShape {
  KernelKind kind = KernelKind::kNone;
  GemmShape gemm;    ///< when kind == kGemm
  Conv2dShape conv;  ///< when kind == kConv2d
  AttentionShape attention;  ///< when kind == kAttention

  static KernelShape of_gemm(const GemmShape& gemm);
  static KernelShape of_conv(const Conv2dShape& conv);
  static KernelShape of_attention(const AttentionShape& attention);

  /// FLOPs of the forward kernel as the op counts them (2 x MACs).
  double forward_flops() const;
  /// The same kernel on `fraction` of the samples (micro-batches): the sample dimension
  /// rounded up, never below 1.
  KernelShape with_samples(double fraction) const;
  /// One line for reports: "gemm 512x1024x4096", "conv n64 c3 224x224 k64 7x7/2" or
  /// "attention 64x[2048x2048 d128] causal".
  std::string describe() const;
  bool operator==(const KernelShape& other) const;
};

}  // namespace placesim
