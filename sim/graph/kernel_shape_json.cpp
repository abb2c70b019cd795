#include "sim/graph/kernel_shape_json.h"

#include <cstdint>
#include <limits>

namespace placesim {
namespace {

constexpr int64_t kMaxDimension = std::numeric_limits<int32_t>::max();

GemmShape read_gemm(const JsonReader& entry) {
  entry.reject_unknown_keys({"batch", "m", "n", "k", "transpose_a", "transpose_b", "samples_in_batch",
                            "input_from_normalization", "output_layer"});
  GemmShape gemm;
  gemm.batch = entry.integer_or("batch", 1, 1, kMaxDimension);
  gemm.m = entry.at("m").as_integer(1, kMaxDimension);
  gemm.n = entry.at("n").as_integer(1, kMaxDimension);
  gemm.k = entry.at("k").as_integer(1, kMaxDimension);
  gemm.transpose_a = entry.bool_or("transpose_a", false);
  gemm.transpose_b = entry.bool_or("transpose_b", false);
  gemm.samples_in_batch = entry.bool_or("samples_in_batch", false);
  gemm.input_from_normalization = entry.bool_or("input_from_normalization", false);
  gemm.output_layer = entry.bool_or("output_layer", false);
  return gemm;
}

Conv2dShape read_conv(const JsonReader& entry) {
  entry.reject_unknown_keys({"n", "c", "h", "w", "k", "r", "s", "stride_h", "stride_w", "pad_h", "pad_w", "dilation_h",
                             "dilation_w", "groups"});
  Conv2dShape conv;
  conv.n = entry.at("n").as_integer(1, kMaxDimension);
  conv.c = entry.at("c").as_integer(1, kMaxDimension);
  conv.h = entry.at("h").as_integer(1, kMaxDimension);
  conv.w = entry.at("w").as_integer(1, kMaxDimension);
  conv.k = entry.at("k").as_integer(1, kMaxDimension);
  conv.r = entry.at("r").as_integer(1, kMaxDimension);
  conv.s = entry.at("s").as_integer(1, kMaxDimension);
  conv.stride_h = entry.integer_or("stride_h", 1, 1, kMaxDimension);
  conv.stride_w = entry.integer_or("stride_w", 1, 1, kMaxDimension);
  conv.pad_h = entry.integer_or("pad_h", 0, 0, kMaxDimension);
  conv.pad_w = entry.integer_or("pad_w", 0, 0, kMaxDimension);
  conv.dilation_h = entry.integer_or("dilation_h", 1, 1, kMaxDimension);
  conv.dilation_w = entry.integer_or("dilation_w", 1, 1, kMaxDimension);
  conv.groups = entry.integer_or("groups", 1, 1, kMaxDimension);
  if (conv.c % conv.groups != 0 || conv.k % conv.groups != 0) {
    entry.at("groups").fail(std::to_string(conv.groups) + " groups do not divide " + std::to_string(conv.c) +
                            " input and " + std::to_string(conv.k) + " output channels");
  }
  if (conv.p() < 1 || conv.q() < 1) {
    entry.fail("the " + std::to_string(conv.r) + "x" + std::to_string(conv.s) + " filter does not fit the " +
               std::to_string(conv.h) + "x" + std::to_string(conv.w) + " input with this padding and dilation");
  }
  return conv;
}

AttentionShape read_attention(const JsonReader& entry) {
  entry.reject_unknown_keys({"batch", "queries", "keys", "head_dim", "causal"});
  AttentionShape attention;
  attention.batch = entry.integer_or("batch", 1, 1, kMaxDimension);
  attention.queries = entry.at("queries").as_integer(1, kMaxDimension);
  attention.keys = entry.at("keys").as_integer(1, kMaxDimension);
  attention.head_dim = entry.at("head_dim").as_integer(1, kMaxDimension);
  attention.causal = entry.bool_or("causal", false);
  return attention;
}

}  // namespace

KernelShape read_kernel_shape(const JsonReader& kernel) {
  kernel.reject_unknown_keys({"gemm", "conv2d", "attention"});
  auto gemm = kernel.find("gemm");
  auto conv = kernel.find("conv2d");
  auto attention = kernel.find("attention");
  if (int(gemm.has_value()) + int(conv.has_value()) + int(attention.has_value()) > 1) {
    kernel.fail("a kernel is one of \"gemm\", \"conv2d\" or \"attention\"");
  }
  if (gemm) return KernelShape::of_gemm(read_gemm(*gemm));
  if (conv) return KernelShape::of_conv(read_conv(*conv));
  if (attention) return KernelShape::of_attention(read_attention(*attention));
  kernel.fail("expected \"gemm\", \"conv2d\" or \"attention\"");
}

Json write_kernel_shape(const KernelShape& kernel) {
  if (kernel.kind == KernelKind::kGemm) {
    const GemmShape& g = kernel.gemm;
    Json gemm = {{"m", g.m}, {"n", g.n}, {"k", g.k}};
    if (g.batch != 1) gemm["batch"] = g.batch;
    if (g.transpose_a) gemm["transpose_a"] = true;
    if (g.transpose_b) gemm["transpose_b"] = true;
    if (g.samples_in_batch) gemm["samples_in_batch"] = true;
    if (g.input_from_normalization) gemm["input_from_normalization"] = true;
    if (g.output_layer) gemm["output_layer"] = true;
    return Json{{"gemm", gemm}};
  }
  if (kernel.kind == KernelKind::kConv2d) {
    const Conv2dShape& c = kernel.conv;
    Json conv = {{"n", c.n}, {"c", c.c}, {"h", c.h}, {"w", c.w}, {"k", c.k}, {"r", c.r}, {"s", c.s}};
    auto put = [&](const char* key, int64_t value, int64_t fallback) {
      if (value != fallback) conv[key] = value;
    };
    put("stride_h", c.stride_h, 1);
    put("stride_w", c.stride_w, 1);
    put("pad_h", c.pad_h, 0);
    put("pad_w", c.pad_w, 0);
    put("dilation_h", c.dilation_h, 1);
    put("dilation_w", c.dilation_w, 1);
    put("groups", c.groups, 1);
    return Json{{"conv2d", conv}};
  }
  if (kernel.kind == KernelKind::kAttention) {
    const AttentionShape& a = kernel.attention;
    Json attention = {{"batch", a.batch}, {"queries", a.queries}, {"keys", a.keys}, {"head_dim", a.head_dim}};
    if (a.causal) attention["causal"] = true;
    return Json{{"attention", attention}};
  }
  return Json::object();
}

}  // namespace placesim
