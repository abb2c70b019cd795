#include "sim/cluster/precision_support.h"

#include <map>

namespace placesim {

std::string precision_unsupported_reason(const Cluster& cluster, Precision precision) {
  if (precision != Precision::kFp8) return "";
  bool has_accelerator = false;
  for (const ClusterDevice& device : cluster.devices()) has_accelerator |= device.spec.kind != DeviceKind::kCpu;
  std::map<std::string, int64_t> lacking;  // profile id -> devices
  std::string first_lacking;
  for (const ClusterDevice& device : cluster.devices()) {
    if (has_accelerator && device.spec.kind == DeviceKind::kCpu) continue;
    if (device.spec.has_peak(precision)) continue;
    if (lacking.empty()) first_lacking = device.name.canonical();
    ++lacking[device.spec.id];
  }
  if (lacking.empty()) return "";
  std::string profiles;
  for (const auto& [id, count] : lacking) {
    profiles += (profiles.empty() ? "" : ", ") + id + " (" + std::to_string(count) + (count == 1 ? " device" : " devices") +
                ", hardware_profiles/devices/" + id + ".json)";
  }
  const std::string name = to_string(precision);
  return "\"" + name + "\" needs an " + name + " tensor-core peak (\"peak_flops_per_second\": {\"" + name +
         "\": ...}) in every accelerator's profile, and cluster \"" + cluster.name + "\" has devices without one: " +
         profiles + ", first " + first_lacking +
         "; FP8 tensor cores are in H100 SXM and H200 (hardware_profiles/devices/h100-sxm5-80gb.json, "
         "h200-sxm-141gb.json): use \"bf16\" on these devices";
}

}  // namespace placesim
