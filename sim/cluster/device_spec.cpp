#include "sim/cluster/device_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace placesim {

double DeviceSpec::peak_for(Precision precision) const {
  auto lookup = [&](Precision p) -> double {
    auto it = peak_flops_per_second.find(p);
    return it == peak_flops_per_second.end() ? 0.0 : it->second;
  };
  if (double peak = lookup(precision); peak > 0) return peak;
  // A device without a dedicated unit for a format runs it on the next one down.
  switch (precision) {
    case Precision::kBf16:
      if (double peak = lookup(Precision::kFp16); peak > 0) return peak;
      break;
    case Precision::kFp16:
      if (double peak = lookup(Precision::kBf16); peak > 0) return peak;
      break;
    case Precision::kInt8:
      if (double peak = lookup(Precision::kFp16); peak > 0) return peak;
      break;
    default: break;
  }
  return lookup(Precision::kFp32);
}

double DeviceSpec::matmul_ceiling_for(Precision precision) const {
  if (!max_achievable_matmul) return 0.0;
  auto it = max_achievable_matmul->flops_per_second.find(precision);
  return it == max_achievable_matmul->flops_per_second.end() ? 0.0 : it->second;
}

double DeviceSpec::sustained_fraction_for(Precision precision) const {
  if (!sustained_matmul) return 1.0;
  auto sustained = sustained_matmul->sustained_flops_per_second.find(precision);
  auto burst = sustained_matmul->burst_flops_per_second.find(precision);
  if (sustained == sustained_matmul->sustained_flops_per_second.end() ||
      burst == sustained_matmul->burst_flops_per_second.end()) {
    return 1.0;
  }
  return sustained->second / burst->second;
}

double DeviceSpec::step_matmul_ceiling_for(Precision precision) const {
  const double measured = matmul_ceiling_for(precision);
  double sustained = 0;
  if (sustained_matmul) {
    auto it = sustained_matmul->sustained_flops_per_second.find(precision);
    if (it != sustained_matmul->sustained_flops_per_second.end()) sustained = it->second;
  }
  if (measured > 0 && sustained > 0) return std::min(measured, sustained);
  return std::max(measured, sustained);
}

bool DeviceSpec::has_peak(Precision precision) const {
  auto it = peak_flops_per_second.find(precision);
  return it != peak_flops_per_second.end() && it->second > 0;
}

bool DeviceSpec::runs_convolutions_on_tensor_cores(Precision precision) const {
  if (kind != DeviceKind::kGpu || compute_capability.empty()) return false;
  const double capability = std::strtod(compute_capability.c_str(), nullptr);  // "7.0"; 0 if unreadable
  switch (precision) {
    case Precision::kFp16:
    case Precision::kBf16:
      return capability >= 7.0;
    case Precision::kTf32:
      return capability >= 8.0;
    case Precision::kFp8:
      return capability >= 8.9;
    default:
      return false;
  }
}

double DeviceSpec::efficiency_for(OpKind op_kind, double flops) const {
  const auto& curve = gemm_efficiency_by_flops;
  if (curve.empty() || (op_kind != OpKind::kMatMul && op_kind != OpKind::kConv)) return efficiency_for(op_kind);
  if (flops <= curve.front().first) return curve.front().second;
  if (flops >= curve.back().first) return curve.back().second;
  auto upper = std::upper_bound(curve.begin(), curve.end(), flops,
                                [](double value, const std::pair<double, double>& point) { return value < point.first; });
  auto lower = upper - 1;
  const double t = std::log(flops / lower->first) / std::log(upper->first / lower->first);
  return lower->second + t * (upper->second - lower->second);
}

double DeviceSpec::efficiency_for(OpKind op_kind) const {
  auto it = compute_efficiency.find(op_kind);
  return it == compute_efficiency.end() ? default_compute_efficiency : it->second;
}

}  // namespace placesim
