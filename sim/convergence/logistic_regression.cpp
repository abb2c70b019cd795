#include "sim/convergence/logistic_regression.h"

#include "sim/convergence/random_stream.h"

namespace placesim {

std::vector<double> LogisticRegression::initial_parameters(uint64_t /*seed*/) const {
  // Zero is the usual start for a convex problem; the seed only matters for the MLP.
  return std::vector<double>(parameter_count(), 0.0);
}

double LogisticRegression::logit(const std::vector<double>& parameters, const double* x) const {
  double z = parameters[features_];
  for (size_t f = 0; f < features_; ++f) z += parameters[f] * x[f];
  return z;
}

void LogisticRegression::add_gradient(const std::vector<double>& parameters, const Dataset& data,
                                      const std::vector<size_t>& rows, double weight,
                                      std::vector<double>* gradient) const {
  // d loss / d z = sigmoid(z) - y; d z / d w = x, d z / d b = 1.
  const double scale = weight / static_cast<double>(rows.size());
  for (size_t row : rows) {
    const double* x = data.row(row);
    const double error = (sigmoid(logit(parameters, x)) - data.labels[row]) * scale;
    for (size_t f = 0; f < features_; ++f) (*gradient)[f] += error * x[f];
    (*gradient)[features_] += error;
  }
}

Evaluation LogisticRegression::evaluate(const std::vector<double>& parameters, const Dataset& data) const {
  Evaluation evaluation;
  for (size_t i = 0; i < data.samples(); ++i) {
    const double z = logit(parameters, data.row(i));
    evaluation.loss += logistic_loss(z, data.labels[i]);
    evaluation.accuracy += (z > 0) == (data.labels[i] > 0.5) ? 1.0 : 0.0;
  }
  const double n = static_cast<double>(data.samples());
  evaluation.loss /= n;
  evaluation.accuracy /= n;
  return evaluation;
}

}  // namespace placesim
