#include "sim/cluster/device_spec.h"

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

double DeviceSpec::efficiency_for(OpKind op_kind) const {
  auto it = compute_efficiency.find(op_kind);
  return it == compute_efficiency.end() ? default_compute_efficiency : it->second;
}

}  // namespace placesim
