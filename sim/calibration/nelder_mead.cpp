#include "sim/calibration/nelder_mead.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace placesim {

NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                             double step, int max_iterations, double tolerance) {
  const size_t n = start.size();
  std::vector<std::vector<double>> points(n + 1, start);
  for (size_t i = 0; i < n; ++i) points[i + 1][i] += step;
  std::vector<double> values(n + 1);
  for (size_t i = 0; i <= n; ++i) values[i] = f(points[i]);
  std::vector<size_t> order(n + 1);
  int iteration = 0;
  auto combine = [&](const std::vector<double>& a, const std::vector<double>& b, double t) {
    std::vector<double> result(n);
    for (size_t i = 0; i < n; ++i) result[i] = a[i] + t * (b[i] - a[i]);
    return result;
  };
  for (; iteration < max_iterations; ++iteration) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    const size_t best = order.front(), worst = order.back(), second_worst = order[n - 1];
    if (std::fabs(values[worst] - values[best]) < tolerance) break;
    std::vector<double> centroid(n, 0.0);
    for (size_t i : order) {
      if (i == worst) continue;
      for (size_t d = 0; d < n; ++d) centroid[d] += points[i][d] / static_cast<double>(n);
    }
    std::vector<double> reflected = combine(centroid, points[worst], -1.0);
    double reflected_value = f(reflected);
    if (reflected_value < values[best]) {
      std::vector<double> expanded = combine(centroid, points[worst], -2.0);
      double expanded_value = f(expanded);
      if (expanded_value < reflected_value) {
        points[worst] = expanded, values[worst] = expanded_value;
      } else {
        points[worst] = reflected, values[worst] = reflected_value;
      }
      continue;
    }
    if (reflected_value < values[second_worst]) {
      points[worst] = reflected, values[worst] = reflected_value;
      continue;
    }
    const bool outside = reflected_value < values[worst];
    std::vector<double> contracted = combine(centroid, outside ? reflected : points[worst], 0.5);
    double contracted_value = f(contracted);
    if (contracted_value < std::min(reflected_value, values[worst])) {
      points[worst] = contracted, values[worst] = contracted_value;
      continue;
    }
    for (size_t i : order) {  // shrink towards the best point
      if (i == best) continue;
      points[i] = combine(points[best], points[i], 0.5);
      values[i] = f(points[i]);
    }
  }
  size_t best = static_cast<size_t>(std::min_element(values.begin(), values.end()) - values.begin());
  return {points[best], values[best], iteration};
}

}  // namespace placesim
