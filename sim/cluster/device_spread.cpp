#include "sim/cluster/device_spread.h"

#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "sim/core/quantile.h"

namespace placesim {

namespace {

double integrate_expected_slowest(double log_sigma, int64_t devices) {
  // E[exp(sigma Z_max)] = integral of exp(sigma z) n phi(z) Phi(z)^(n-1) dz, by Simpson's rule on
  // [-9, 9 + sigma] (the maximum of up to millions of normals lies well inside; the integrand
  // vanishes at both ends), divided by E[exp(sigma Z)] = exp(sigma^2 / 2).
  const double n = static_cast<double>(devices);
  const double lo = -9.0;
  const double hi = 9.0 + log_sigma;
  constexpr int kIntervals = 4000;  // even
  const double h = (hi - lo) / kIntervals;
  auto integrand = [&](double z) {
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    if (cdf <= 0) return 0.0;
    const double log_density = -0.5 * z * z - 0.5 * std::log(2.0 * M_PI);
    return std::exp(log_sigma * z + std::log(n) + log_density + (n - 1.0) * std::log(cdf));
  };
  double sum = integrand(lo) + integrand(hi);
  for (int i = 1; i < kIntervals; ++i) sum += integrand(lo + i * h) * (i % 2 == 1 ? 4.0 : 2.0);
  const double expected_max = sum * h / 3.0;
  return expected_max / std::exp(0.5 * log_sigma * log_sigma);
}

}  // namespace

double expected_slowest_of(double log_sigma, int64_t devices) {
  if (devices <= 1 || log_sigma <= 0) return 1.0;
  // 4,000 Simpson points cost about 0.15 ms, once per plan: a sweep builds thousands of plans over
  // a few GPU counts and one sigma, so each pair is integrated once per process.
  static std::mutex mutex;
  static std::map<std::pair<double, int64_t>, double> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto [it, added] = known.try_emplace({log_sigma, devices}, 0.0);
  if (added) it->second = integrate_expected_slowest(log_sigma, devices);
  return it->second;
}

double fit_gemm_time_log_sigma(std::vector<double> per_gpu_seconds) {
  if (per_gpu_seconds.size() < 10) throw std::invalid_argument("a spread needs at least ten GPUs' times");
  for (double seconds : per_gpu_seconds) {
    if (!(seconds > 0)) throw std::invalid_argument("a GPU's time must be positive");
  }
  constexpr double kNormalQuantile90 = 1.2815515655446004;  // Phi^-1(0.9)
  return (std::log(quantile(per_gpu_seconds, 0.9)) - std::log(quantile(per_gpu_seconds, 0.1))) /
         (2.0 * kNormalQuantile90);
}

}  // namespace placesim
