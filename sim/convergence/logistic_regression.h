// LogisticRegression: the convex training problem of the convergence replay, a linear model with
// a bias (parameters: one weight per feature, then the bias) under binary cross-entropy.
#pragma once

#include "sim/convergence/training_problem.h"

namespace placesim {

class LogisticRegression : public TrainingProblem {
 public:
  explicit LogisticRegression(size_t features) : features_(features) {}
  std::string name() const override { return "logistic"; }
  size_t parameter_count() const override { return features_ + 1; }
  std::vector<double> initial_parameters(uint64_t seed) const override;
  void add_gradient(const std::vector<double>& parameters, const Dataset& data, const std::vector<size_t>& rows,
                    double weight, std::vector<double>* gradient) const override;
  Evaluation evaluate(const std::vector<double>& parameters, const Dataset& data) const override;

 private:
  double logit(const std::vector<double>& parameters, const double* x) const;
  size_t features_;
};

}  // namespace placesim
