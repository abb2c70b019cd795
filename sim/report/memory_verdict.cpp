#include "sim/report/memory_verdict.h"

#include <algorithm>
#include <utility>

#include "sim/core/units_format.h"

namespace placesim {

std::string describe_memory(const MemoryBreakdown& memory) {
  std::vector<std::pair<double, std::string>> parts = {
      {memory.activation_bytes, "activations"},     {memory.parameter_bytes, "parameters"},
      {memory.gradient_bytes, "gradients"},         {memory.optimizer_state_bytes, "optimizer state"},
      {memory.workspace_bytes, "workspace"},
  };
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (const auto& [bytes, what] : parts) {
    if (bytes > 0) text += (text.empty() ? "" : ", ") + what + " " + format_bytes(bytes);
  }
  return text.empty() ? "nothing" : text;
}

std::string memory_verdict(const DeviceMetrics& device, const Cluster& cluster) {
  return cluster.device(device.device).name.local() + " needs " + format_bytes(device.peak_memory_bytes) + ", has " +
         format_bytes(device.memory_capacity_bytes) + ": " + describe_memory(device.peak_memory);
}

std::string memory_verdict(const std::string& device_name, const MemoryBreakdown& memory, double capacity_bytes) {
  return device_name + " needs " + format_bytes(memory.total()) + ", has " + format_bytes(capacity_bytes) + ": " +
         describe_memory(memory);
}

std::vector<std::string> out_of_memory_verdicts(const RunMetrics& metrics, const Cluster& cluster) {
  std::vector<const DeviceMetrics*> over;
  for (const DeviceMetrics& device : metrics.devices) {
    if (device.out_of_memory) over.push_back(&device);
  }
  auto lacking = [](const DeviceMetrics* d) { return d->peak_memory_bytes - d->memory_capacity_bytes; };
  std::stable_sort(over.begin(), over.end(), [&](auto* a, auto* b) { return lacking(a) > lacking(b); });
  std::vector<std::string> verdicts;
  for (const DeviceMetrics* device : over) verdicts.push_back(memory_verdict(*device, cluster));
  return verdicts;
}

std::string worst_verdicts(const std::vector<std::string>& verdicts, size_t shown) {
  std::string text;
  for (size_t v = 0; v < std::min(shown, verdicts.size()); ++v) text += (v ? "; " : "") + verdicts[v];
  if (verdicts.size() > shown) text += "; and " + std::to_string(verdicts.size() - shown) + " more over their capacity";
  return text;
}

Json memory_breakdown_json(const MemoryBreakdown& memory) {
  return {{"parameter_bytes", memory.parameter_bytes},
          {"gradient_bytes", memory.gradient_bytes},
          {"optimizer_state_bytes", memory.optimizer_state_bytes},
          {"activation_bytes", memory.activation_bytes},
          {"workspace_bytes", memory.workspace_bytes},
          {"total_bytes", memory.total()}};
}

}  // namespace placesim
