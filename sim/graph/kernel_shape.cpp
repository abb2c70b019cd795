#include "sim/graph/kernel_shape.h"

#include <algorithm>
#include <cmath>

namespace placesim {
namespace {

int64_t scaled_count(int64_t count, double fraction) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(count) * fraction - 1e-9)));
}

int64_t output_size(int64_t input, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  if (stride < 1) return 0;
  return (input + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

}  // namespace

bool GemmShape::operator==(const GemmShape& o) const {
  return batch == o.batch && m == o.m && n == o.n && k == o.k && transpose_a == o.transpose_a &&
         transpose_b == o.transpose_b && samples_in_batch == o.samples_in_batch &&
         input_from_normalization == o.input_from_normalization && output_layer == o.output_layer;
}

double AttentionShape::forward_flops() const {
  const double full = 4.0 * static_cast<double>(batch) * static_cast<double>(queries) * static_cast<double>(keys) *
                      static_cast<double>(head_dim);
  return causal ? full / 2 : full;
}

bool AttentionShape::operator==(const AttentionShape& o) const {
  return batch == o.batch && queries == o.queries && keys == o.keys && head_dim == o.head_dim && causal == o.causal;
}

int64_t Conv2dShape::p() const { return output_size(h, r, stride_h, pad_h, dilation_h); }
int64_t Conv2dShape::q() const { return output_size(w, s, stride_w, pad_w, dilation_w); }

double Conv2dShape::direct_flops() const {
  return 2.0 * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(p()) *
         static_cast<double>(q()) * static_cast<double>(c / std::max<int64_t>(1, groups)) *
         static_cast<double>(r) * static_cast<double>(s);
}

bool Conv2dShape::operator==(const Conv2dShape& o) const {
  return n == o.n && c == o.c && h == o.h && w == o.w && k == o.k && r == o.r && s == o.s &&
         stride_h == o.stride_h && stride_w == o.stride_w && pad_h == o.pad_h && pad_w == o.pad_w &&
         dilation_h == o.dilation_h && dilation_w == o.dilation_w && groups == o.groups;
}

KernelShape KernelShape::of_gemm(const GemmShape& gemm) {
  KernelShape shape;
  shape.kind = KernelKind::kGemm;
  shape.gemm = gemm;
  return shape;
}

KernelShape KernelShape::of_conv(const Conv2dShape& conv) {
  KernelShape shape;
  shape.kind = KernelKind::kConv2d;
  shape.conv = conv;
  return shape;
}

KernelShape KernelShape::of_attention(const AttentionShape& attention) {
  KernelShape shape;
  shape.kind = KernelKind::kAttention;
  shape.attention = attention;
  return shape;
}

double KernelShape::forward_flops() const {
  switch (kind) {
    case KernelKind::kGemm: return gemm.flops();
    case KernelKind::kConv2d: return conv.direct_flops();
    case KernelKind::kAttention: return attention.forward_flops();
    case KernelKind::kNone: break;
  }
  return 0;
}

KernelShape KernelShape::with_samples(double fraction) const {
  KernelShape scaled = *this;
  if (fraction == 1.0) return scaled;
  if (kind == KernelKind::kGemm) {
    int64_t& samples = gemm.samples_in_batch ? scaled.gemm.batch : scaled.gemm.m;
    samples = scaled_count(samples, fraction);
  } else if (kind == KernelKind::kConv2d) {
    scaled.conv.n = scaled_count(conv.n, fraction);
  } else if (kind == KernelKind::kAttention) {
    scaled.attention.batch = scaled_count(attention.batch, fraction);
  }
  return scaled;
}

std::string KernelShape::describe() const {
  switch (kind) {
    case KernelKind::kGemm:
      return std::string("gemm ") + (gemm.batch > 1 ? std::to_string(gemm.batch) + "x[" : "") + std::to_string(gemm.m) +
             "x" + std::to_string(gemm.n) + "x" + std::to_string(gemm.k) + (gemm.batch > 1 ? "]" : "");
    case KernelKind::kConv2d:
      return "conv n" + std::to_string(conv.n) + " c" + std::to_string(conv.c) + " " + std::to_string(conv.h) + "x" +
             std::to_string(conv.w) + " k" + std::to_string(conv.k) + " " + std::to_string(conv.r) + "x" +
             std::to_string(conv.s) + "/" + std::to_string(conv.stride_h) +
             (conv.groups > 1 ? " g" + std::to_string(conv.groups) : "");
    case KernelKind::kAttention:
      return "attention " + std::to_string(attention.batch) + "x[" + std::to_string(attention.queries) + "x" +
             std::to_string(attention.keys) + " d" + std::to_string(attention.head_dim) + "]" +
             (attention.causal ? " causal" : "");
    case KernelKind::kNone: break;
  }
  return "none";
}

bool KernelShape::operator==(const KernelShape& o) const {
  if (kind != o.kind) return false;
  if (kind == KernelKind::kGemm) return gemm == o.gemm;
  if (kind == KernelKind::kConv2d) return conv == o.conv;
  if (kind == KernelKind::kAttention) return attention == o.attention;
  return true;
}

}  // namespace placesim
