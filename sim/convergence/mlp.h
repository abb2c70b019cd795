// Mlp: the non-convex training problem of the convergence replay, one tanh hidden layer and a
// logit output under binary cross-entropy, with hand-written forward and backward passes.
// Parameter layout: hidden weights (units x features), hidden biases, output weights, output bias.
#pragma once

#include "sim/convergence/training_problem.h"

namespace placesim {

class Mlp : public TrainingProblem {
 public:
  Mlp(size_t features, size_t hidden_units) : features_(features), units_(hidden_units) {}
  std::string name() const override { return "mlp"; }
  size_t parameter_count() const override { return units_ * features_ + units_ + units_ + 1; }
  std::vector<double> initial_parameters(uint64_t seed) const override;
  void add_gradient(const std::vector<double>& parameters, const Dataset& data, const std::vector<size_t>& rows,
                    double weight, std::vector<double>* gradient) const override;
  Evaluation evaluate(const std::vector<double>& parameters, const Dataset& data) const override;
  /// The hidden layer (weights and biases), then the output layer.
  std::vector<size_t> layer_starts() const override { return {0, output_weights()}; }

 private:
  /// The hidden activations of `x` into `hidden` (units_), returns the logit.
  double forward(const std::vector<double>& parameters, const double* x, std::vector<double>* hidden) const;
  size_t hidden_bias() const { return units_ * features_; }
  size_t output_weights() const { return hidden_bias() + units_; }
  size_t output_bias() const { return output_weights() + units_; }
  size_t features_;
  size_t units_;
};

}  // namespace placesim
