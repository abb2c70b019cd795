// Nelder-Mead simplex minimisation (Nelder and Mead, Computer Journal 7(4), 1965; the
// coefficients 1, 2, 0.5, 0.5 of Lagarias et al., SIAM J. Optim. 9(1), 1998): fits a few
// parameters without derivatives, deterministically.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

namespace placesim {

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int iterations = 0;
};

/// Minimises `f` from `start` with an initial simplex of `step` along each axis; stops after
/// `max_iterations` or when the simplex's values differ by less than `tolerance`.
NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                             double step, int max_iterations = 2000, double tolerance = 1e-10);

/// A fraction in (0, 1) as an unconstrained coordinate, and back: the fits search logit(p).
inline double from_logit(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double to_logit(double p) { return std::log(p / (1.0 - p)); }

}  // namespace placesim
