#include "sim/convergence/mlp.h"

#include <cmath>

#include "sim/convergence/random_stream.h"

namespace placesim {

std::vector<double> Mlp::initial_parameters(uint64_t seed) const {
  // Glorot/Xavier uniform weights (Glorot & Bengio 2010): U(-a, a), a = sqrt(6 / (fan_in + fan_out));
  // zero biases.
  RandomStream random(mix_seed(seed, 0xA11CE));
  std::vector<double> parameters(parameter_count(), 0.0);
  const double hidden_limit = std::sqrt(6.0 / static_cast<double>(features_ + units_));
  for (size_t i = 0; i < hidden_bias(); ++i) parameters[i] = (2 * random.uniform() - 1) * hidden_limit;
  const double output_limit = std::sqrt(6.0 / static_cast<double>(units_ + 1));
  for (size_t u = 0; u < units_; ++u) parameters[output_weights() + u] = (2 * random.uniform() - 1) * output_limit;
  return parameters;
}

double Mlp::forward(const std::vector<double>& parameters, const double* x, std::vector<double>* hidden) const {
  double logit = parameters[output_bias()];
  for (size_t u = 0; u < units_; ++u) {
    const double* w = parameters.data() + u * features_;
    double z = parameters[hidden_bias() + u];
    for (size_t f = 0; f < features_; ++f) z += w[f] * x[f];
    (*hidden)[u] = std::tanh(z);
    logit += parameters[output_weights() + u] * (*hidden)[u];
  }
  return logit;
}

void Mlp::add_gradient(const std::vector<double>& parameters, const Dataset& data, const std::vector<size_t>& rows,
                       double weight, std::vector<double>* gradient) const {
  std::vector<double> hidden(units_);
  const double scale = weight / static_cast<double>(rows.size());
  std::vector<double>& g = *gradient;
  for (size_t row : rows) {
    const double* x = data.row(row);
    // d loss / d logit = sigmoid(logit) - y; tanh' = 1 - tanh^2.
    const double error = (sigmoid(forward(parameters, x, &hidden)) - data.labels[row]) * scale;
    g[output_bias()] += error;
    for (size_t u = 0; u < units_; ++u) {
      g[output_weights() + u] += error * hidden[u];
      const double back = error * parameters[output_weights() + u] * (1 - hidden[u] * hidden[u]);
      g[hidden_bias() + u] += back;
      double* gw = g.data() + u * features_;
      for (size_t f = 0; f < features_; ++f) gw[f] += back * x[f];
    }
  }
}

Evaluation Mlp::evaluate(const std::vector<double>& parameters, const Dataset& data) const {
  std::vector<double> hidden(units_);
  Evaluation evaluation;
  for (size_t i = 0; i < data.samples(); ++i) {
    const double z = forward(parameters, data.row(i), &hidden);
    evaluation.loss += logistic_loss(z, data.labels[i]);
    evaluation.accuracy += (z > 0) == (data.labels[i] > 0.5) ? 1.0 : 0.0;
  }
  const double n = static_cast<double>(data.samples());
  evaluation.loss /= n;
  evaluation.accuracy /= n;
  return evaluation;
}

}  // namespace placesim
