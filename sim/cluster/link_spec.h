// LinkSpec: one kind of interconnect (PCIe 3.0 x16, NVLink 2, InfiniBand EDR...), with its
// per-direction effective bandwidth and one-way latency, from hardware_profiles/links.json.
#pragma once

#include <string>

namespace placesim {

struct LinkSpec {
  std::string type;  ///< id in links.json, e.g. "pcie3_x16"
  double bandwidth_bytes_per_second = 0;  ///< per direction
  double latency_seconds = 0;
};

}  // namespace placesim
