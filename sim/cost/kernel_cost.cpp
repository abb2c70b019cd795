#include "sim/cost/kernel_cost.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "sim/cost/conv_model.h"
#include "sim/cost/pooling_model.h"
#include "sim/cost/roofline.h"
#include "sim/plan/kernel_precision.h"

namespace placesim {
namespace {

/// Everything a kernel's time depends on, as a flat key.
struct CacheKey {
  std::array<int64_t, 16> shape{};
  uint64_t model = 0;
  double peak = 0;
  double bandwidth = 0;
  double ceiling = 0;  ///< the step's matmul ceiling at the precision (boards sharing one fit differ)
  int precision = 0;
  int passes = 0;
  int kind = 0;

  bool operator==(const CacheKey& o) const {
    return shape == o.shape && model == o.model && peak == o.peak && bandwidth == o.bandwidth && ceiling == o.ceiling &&
           precision == o.precision && passes == o.passes && kind == o.kind;
  }
};

struct CacheKeyHash {
  size_t operator()(const CacheKey& key) const {
    uint64_t hash = key.model ^ (static_cast<uint64_t>(key.passes) << 8) ^ static_cast<uint64_t>(key.precision) ^
                    (static_cast<uint64_t>(key.kind) << 16);
    for (int64_t value : key.shape) hash = (hash ^ static_cast<uint64_t>(value)) * 1099511628211ull;
    uint64_t bits = 0;
    std::memcpy(&bits, &key.peak, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
    std::memcpy(&bits, &key.bandwidth, sizeof bits);
    hash = (hash ^ bits) * 1099511628211ull;
    std::memcpy(&bits, &key.ceiling, sizeof bits);
    return static_cast<size_t>((hash ^ bits) * 1099511628211ull);
  }
};

/// The model's fingerprint, computed once per model rather than per task: remembered beside a
/// weak reference, so a model freed and another allocated at its address is never mistaken for it.
uint64_t fingerprint_of(const std::shared_ptr<const KernelModel>& model) {
  thread_local std::weak_ptr<const KernelModel> last;
  thread_local uint64_t last_fingerprint = 0;
  if (last.expired() || last.lock() != model) {
    last = model;
    last_fingerprint = model->fingerprint();
  }
  return last_fingerprint;
}

/// `device`: the step's (step_gemm_device), whose peak and ceiling carry the device's corrections.
CacheKey key_of(const KernelShape& shape, uint8_t passes, Precision precision, const DeviceSpec& spec,
                const GemmDevice& device) {
  CacheKey key;
  key.kind = static_cast<int>(shape.kind);
  if (shape.kind == KernelKind::kGemm) {
    const GemmShape& g = shape.gemm;
    key.shape = {g.batch, g.m, g.n, g.k, g.transpose_a, g.transpose_b};
  } else if (shape.kind == KernelKind::kAttention) {
    const AttentionShape& a = shape.attention;
    key.shape = {a.batch, a.queries, a.keys, a.head_dim, a.causal};
  } else {
    const Conv2dShape& c = shape.conv;
    key.shape = {c.n,        c.c,        c.h,     c.w,     c.k,          c.r,          c.s,     c.stride_h,
                 c.stride_w, c.pad_h,    c.pad_w, c.dilation_h, c.dilation_w, c.groups, 0, 0};
  }
  key.model = fingerprint_of(spec.kernel_model);
  key.peak = device.peak_flops_per_second;
  key.bandwidth = device.memory_bandwidth_bytes_per_second;
  key.ceiling = device.max_flops_per_second;
  key.precision = static_cast<int>(precision);
  key.passes = passes;
  return key;
}

/// The GEMMs of a layer's backward pass: C = A B gives dA = dC B^T (m x k from m x n and n x k)
/// and dB = A^T dC (k x n from k x m and m x n).
GemmShape backward_gemm(const GemmShape& forward, KernelPass pass) {
  GemmShape gemm = forward;
  if (pass == kBackwardDataPass) {
    gemm.n = forward.k;
    gemm.k = forward.n;
  } else {
    gemm.m = forward.k;
    gemm.k = forward.m;
  }
  return gemm;
}

/// The device as a training step's kernels see it: the peak at the fitted rate, less what the
/// fit's low-power inputs did not draw (KernelModel::input_power) and what the clock loses once
/// the board runs at its power limit (DeviceSpec::sustained_matmul: the fit's kernels were timed
/// in bursts), and no faster than the fastest matmul measured on it, sustained
/// (DeviceSpec::step_matmul_ceiling_for).
/// Under KernelLoad::kBurst, as the fit's tables were timed: at the burst's rate and the burst
/// ceiling (DeviceSpec::matmul_ceiling_for).
GemmDevice step_gemm_device(const DeviceSpec& spec, Precision precision, KernelLoad load = KernelLoad::kSustained) {
  const bool sustained = load == KernelLoad::kSustained;
  return GemmDevice{spec.peak_for(precision) * spec.kernel_model->input_power_fraction(precision) *
                        (sustained ? spec.sustained_fraction_for(precision) : 1.0),
                    spec.memory_bandwidth_bytes_per_second, spec.kernel_model.get(),
                    sustained ? spec.step_matmul_ceiling_for(precision) : spec.matmul_ceiling_for(precision)};
}

/// attention_gemm_seconds on `device`.
double attention_gemm_seconds_on(const AttentionShape& a, bool forward, Precision precision, const GemmDevice& device) {
  const double bytes = gemm_operand_bytes(precision);
  // With a causal mask the kernel skips the blocks above the diagonal: half the keys on average.
  const int64_t keys = a.causal ? std::max<int64_t>(1, a.keys / 2) : a.keys;
  auto gemm = [&](int64_t m, int64_t n, int64_t k) {
    GemmShape shape;
    shape.batch = a.batch;
    shape.m = m;
    shape.n = n;
    shape.k = k;
    return estimate_gemm(shape, bytes, precision, device).seconds;
  };
  const double scores = gemm(a.queries, keys, a.head_dim);   // S = Q K^T (dP = dO V^T likewise)
  const double context = gemm(a.queries, a.head_dim, keys);  // O = P V (dQ = dS K likewise)
  if (forward) return scores + context;
  // Backward: S again, dP, dV = P^T dO, dQ = dS K, dK = dS^T Q.
  const double keys_side = gemm(keys, a.head_dim, a.queries);
  return 2 * scores + context + 2 * keys_side;
}

/// A fused attention kernel's passes on `device`: its GEMMs' time divided by the fitted efficiency.
double attention_seconds(const AttentionShape& a, uint8_t passes, Precision precision, const GemmDevice& device) {
  const std::optional<AttentionKernelFit>& fit = device.model->attention;
  double seconds = 0;
  if (passes & kForwardPass) {
    seconds += attention_gemm_seconds_on(a, true, precision, device) / (fit ? fit->forward_efficiency : 1.0);
  }
  if (passes & kBackwardPasses) {  // one fused backward kernel computes dQ, dK and dV
    seconds += attention_gemm_seconds_on(a, false, precision, device) / (fit ? fit->backward_efficiency : 1.0);
  }
  return seconds;
}

/// A shaped kernel's passes on `device` (step_gemm_device).
double shaped_seconds(const KernelShape& shape, uint8_t passes, Precision precision, const GemmDevice& device) {
  if (shape.kind == KernelKind::kAttention) return attention_seconds(shape.attention, passes, precision, device);
  const double bytes = gemm_operand_bytes(precision);  // a shaped kernel is a GEMM or a convolution
  double seconds = 0;
  for (KernelPass pass : {kForwardPass, kBackwardDataPass, kBackwardFilterPass}) {
    if (!(passes & pass)) continue;
    if (shape.kind == KernelKind::kGemm) {
      const GemmShape gemm = pass == kForwardPass ? shape.gemm : backward_gemm(shape.gemm, pass);
      seconds += estimate_gemm(gemm, bytes, precision, device).seconds;
    } else {
      seconds += estimate_conv(shape.conv, pass, bytes, precision, device).seconds;
    }
  }
  return seconds;
}

}  // namespace

double attention_gemm_seconds(const AttentionShape& attention, bool forward, Precision precision, const DeviceSpec& spec,
                              KernelLoad load) {
  return attention_gemm_seconds_on(attention, forward, precision, step_gemm_device(spec, precision, load));
}

double kernel_model_seconds(const Task& task, Precision precision, const DeviceSpec& spec) {
  const KernelModel& model = *spec.kernel_model;
  if (task.kernel && task.kernel_passes != 0 && task.kernel->kind != KernelKind::kNone) {
    thread_local std::unordered_map<CacheKey, double, CacheKeyHash> cache;
    const KernelShape shape = task.kernel->with_samples(task.kernel_samples);
    // Under fp8 a linear layer's GEMMs compute in FP8, attention in bf16 (kernel_precision.h).
    const Precision kernel = kernel_precision(precision, task.op_kind, task.kernel.get());
    const GemmDevice device = step_gemm_device(spec, kernel);  // once: the key reads its corrections
    CacheKey key = key_of(shape, task.kernel_passes, kernel, spec, device);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    if (cache.size() > (1u << 20)) cache.clear();
    double seconds = shaped_seconds(shape, task.kernel_passes, kernel, device);
    cache.emplace(key, seconds);
    return seconds;
  }
  if (task.flops <= 0 && task.memory_bytes <= 0) return 0;
  if (task.op_kind == OpKind::kPooling && model.pooling_reads_per_second_per_sm > 0) {
    // A pooling op's FLOPs count the window elements it reads (layer_costs.h, pooling_flops).
    const double bytes = task.memory_bytes * kernel_bytes_scale(precision, task.op_kind);
    return pooling_kernel_seconds(task.flops, bytes, spec.memory_bandwidth_bytes_per_second, model) +
           model.memory_latency_seconds + model.kernel_overhead_seconds;
  }
  // No kernel shape: the roofline, with the fitted bandwidth efficiency and fixed costs.
  const RooflineTerms terms = roofline_terms(task, precision, spec, model.memory_efficiency_for(task.op_kind));
  return std::max(terms.math_seconds, terms.memory_seconds + model.memory_latency_seconds) + model.kernel_overhead_seconds;
}

}  // namespace placesim
