// TrainingProblem: a small model trained in-process on the CPU by the convergence replay: its
// initial parameters, the gradient of its loss on a minibatch, and its loss and accuracy on a
// data set. Implementations are deterministic: the same inputs give the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/convergence/dataset.h"
#include "sim/spec/convergence_options.h"

namespace placesim {

struct Evaluation {
  double loss = 0;      ///< mean binary cross-entropy, nats
  double accuracy = 0;  ///< share of samples classified correctly
};

class TrainingProblem {
 public:
  virtual ~TrainingProblem() = default;
  virtual std::string name() const = 0;
  virtual size_t parameter_count() const = 0;
  /// Seeded initial parameters.
  virtual std::vector<double> initial_parameters(uint64_t seed) const = 0;
  /// The mean loss gradient over `rows` of `data`, added to `gradient` times `weight`.
  virtual void add_gradient(const std::vector<double>& parameters, const Dataset& data, const std::vector<size_t>& rows,
                            double weight, std::vector<double>* gradient) const = 0;
  /// Loss and accuracy over every sample of `data`.
  virtual Evaluation evaluate(const std::vector<double>& parameters, const Dataset& data) const = 0;
  /// Where each layer's parameters start, input side first (a pipeline's stages split the model
  /// there): {0} for a single layer.
  virtual std::vector<size_t> layer_starts() const { return {0}; }
};

/// Logistic regression on `features` inputs, or an MLP with one tanh layer of `hidden_units`.
std::unique_ptr<TrainingProblem> make_training_problem(ProblemKind kind, size_t features, size_t hidden_units);

/// Binary cross-entropy of a logit against a 0/1 label, computed without overflow.
double logistic_loss(double logit, double label);
/// The logistic function, without overflow.
double sigmoid(double logit);

}  // namespace placesim
