// RandomStream: a small seeded generator (SplitMix64, Steele et al. 2014) for the convergence
// replay's data sets, initial weights and minibatches, so a seed gives the same numbers with
// every standard library (std::normal_distribution is implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>

namespace placesim {

class RandomStream {
 public:
  explicit RandomStream(uint64_t seed) : state_(seed) {}

  /// The next 64 random bits.
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller; one value per call, simple rather than fast).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }
  /// Uniform integer in [0, bound).
  uint64_t below(uint64_t bound) { return next() % bound; }

 private:
  uint64_t state_;
};

/// A seed derived from several counters (for counter-based streams: one per worker and step).
inline uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b = 0) {
  RandomStream stream(seed ^ (a * 0xD1B54A32D192ED03ull) ^ (b * 0x8CB92BA72F3D8DD7ull));
  return stream.next();
}

}  // namespace placesim
