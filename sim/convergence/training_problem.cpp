#include "sim/convergence/training_problem.h"

#include <algorithm>
#include <cmath>

#include "sim/convergence/logistic_regression.h"
#include "sim/convergence/mlp.h"

namespace placesim {

std::unique_ptr<TrainingProblem> make_training_problem(ProblemKind kind, size_t features, size_t hidden_units) {
  if (kind == ProblemKind::kLogistic) return std::make_unique<LogisticRegression>(features);
  return std::make_unique<Mlp>(features, hidden_units);
}

double logistic_loss(double logit, double label) {
  // log(1 + e^z) - y z, with log(1 + e^z) = max(z, 0) + log1p(e^-|z|).
  return std::max(logit, 0.0) + std::log1p(std::exp(-std::abs(logit))) - label * logit;
}

double sigmoid(double logit) {
  if (logit >= 0) return 1.0 / (1.0 + std::exp(-logit));
  const double e = std::exp(logit);
  return e / (1.0 + e);
}

}  // namespace placesim
