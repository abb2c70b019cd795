#include "sim/core/quantile.h"

#include <algorithm>
#include <cmath>

namespace placesim {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t lower = static_cast<size_t>(std::floor(position));
  const size_t upper = std::min(values.size() - 1, lower + 1);
  const double t = position - static_cast<double>(lower);
  return values[lower] + t * (values[upper] - values[lower]);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace placesim
