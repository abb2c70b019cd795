// Element counts of ONNX tensor shapes, shared by the importer and the exporter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace placesim {

/// Product of dims[from..], as a double (shapes of large models overflow no 64-bit count, but
/// their FLOP formulas are doubles anyway); 1 for an empty range.
inline double dims_product(const std::vector<int64_t>& dims, size_t from = 0) {
  double count = 1;
  for (size_t i = from; i < dims.size(); ++i) count *= static_cast<double>(dims[i]);
  return count;
}

}  // namespace placesim
